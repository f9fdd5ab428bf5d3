//! The HTML report renders hostile content — agent replies, tool results, injected text, ids and names carrying
//! markup, event handlers, `javascript:` URLs, SVG, NUL and broken UTF-8 — as inert text. Checked by parsing the
//! report with an HTML5 parser (html5ever, the parser of Servo).
//!
//! With `GAUNTLET_HOSTILE_HTML_OUT=/some/file.html` set, the run report is also written there and the red-team
//! report next to it (`/some/file-redteam.html`), for `.ci/html-chromium.sh` to load in headless Chromium.

use gauntlet_attacks::{ControllerDecision, PlacedInjection};
use gauntlet_cases::run::{Counts, RungCount, SliceCell, TargetSettingRow};
use gauntlet_cases::{EpisodeRecord, RunConfig, Stop, Summary};
use gauntlet_core::{
    Decision, Evidence, GatewayEvent, HarmTier, InjectionApplied, Level, Outcome, Rate, Setting,
    ToolCall, Trace, Turn, Verdict,
};
use gauntlet_judge::redteam::{RtJudgement, RtOutcome};
use gauntlet_redteam::job::{Report, RtCase, Tally};
use gauntlet_report::html::{HtmlOptions, privilege_html, redteam_html, run_html};
use gauntlet_report::json::RunHeader;
use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use serde_json::{Value, json};

/// Payloads that would run script if rendered as markup. The ones naming `PWNED` / `data-pwned` are what
/// `.ci/html-chromium.sh` looks for in the DOM after Chromium loaded the page.
fn payloads() -> Vec<String> {
    vec![
        "<script>alert(1)</script>".into(),
        "<img src=x onerror=alert(1)>".into(),
        r#"<a href="javascript:alert(1)">x</a>"#.into(),
        "<svg onload=alert(1)><script>alert(2)</script></svg>".into(),
        r#""'><iframe srcdoc="<script>parent.document.title='PWNED'</script>"></iframe>"#.into(),
        "</textarea></style></title><script>document.body.setAttribute('data-pwned','1')</script>"
            .into(),
        "<script>document.body.setAttribute('data-pwned','2')</script>".into(),
        r#"<img src=x onerror="document.title='PWNED'">"#.into(),
        r#"<a href="javascript:document.title='PWNED'">click</a>"#.into(),
        "<svg><script>document.body.setAttribute('data-pwned','3')</script></svg>".into(),
        "<svg onload=\"document.title='PWNED'\"></svg>".into(),
        "<math><mtext><table><mglyph><style><img src=x onerror=\"document.title='PWNED'\">".into(),
        "<!-- --><script>document.title='PWNED'</script><!-- -->".into(),
        "<body onload=\"document.title='PWNED'\">".into(),
        "nul\0byte".into(),
        format!("broken{}utf8", String::from_utf8_lossy(&[0xff, 0xfe, b'<'])),
    ]
}

/// How the report shows a string: NUL (and other C0 controls) as Control Pictures.
fn visible(s: &str) -> String {
    s.replace('\0', "\u{2400}")
}

fn pick(i: usize) -> String {
    let p = payloads();
    p[i % p.len()].clone()
}

fn all() -> String {
    payloads().join(" ")
}

fn rate(k: u64, n: u64) -> Rate {
    Rate::new(k, n)
}

fn counts(violated: u64, valid: u64) -> Counts {
    Counts {
        episodes: valid + 1,
        errored: 1,
        undetermined: 0,
        violated,
        valid,
        task_success: 1,
        task_checked: valid,
        delivered: valid,
        violated_delivered: violated,
        attack_fallbacks: 0,
    }
}

fn event(seq: u64, i: usize) -> GatewayEvent {
    let injected = format!("INJ{seq} {}", pick(i + 3));
    let raw = json!({"id": pick(i), "body": format!("hello {}", pick(i + 1)), "n": 3});
    let observed = json!({
        "id": pick(i),
        "body": format!("hello {}\n\n{injected}", pick(i + 1)),
        "n": 3
    });
    GatewayEvent {
        seq,
        turn: 1,
        call: ToolCall {
            id: format!("call-{seq}"),
            tool: pick(i + 2),
            args: json!({"to": pick(i + 4), "text": all(), pick(i + 5): [pick(i + 6)]}),
        },
        decision: if seq.is_multiple_of(2) {
            Decision::Deny {
                reason: pick(i + 7),
            }
        } else {
            Decision::Allow
        },
        raw,
        observed,
        injection: Some(InjectionApplied {
            rule: 0,
            mode: "append".into(),
            inscribed: false,
        }),
        tier: HarmTier::H4,
        error: Some(pick(i + 8)),
        at: pick(i + 9),
    }
}

/// A whole-result injection: the raw result is a plain string, so the text shows as is.
fn string_event(seq: u64, i: usize) -> GatewayEvent {
    GatewayEvent {
        seq,
        turn: 1,
        call: ToolCall {
            id: "c".into(),
            tool: "web.fetch".into(),
            args: json!({"url": "javascript:alert(1)"}),
        },
        decision: Decision::Allow,
        raw: Value::String(pick(i)),
        observed: Value::String(format!("{}\n\n{}", pick(i + 1), pick(i))),
        injection: Some(InjectionApplied {
            rule: 1,
            mode: "prefix".into(),
            inscribed: false,
        }),
        tier: HarmTier::H0,
        error: None,
        at: "t".into(),
    }
}

fn episode(index: usize) -> EpisodeRecord {
    let i = index * 3;
    let turns = (1..=2)
        .map(|t| Turn {
            index: t,
            user: pick(i + t as usize),
            events: vec![
                event(u64::from(t) * 2 - 1, i + t as usize),
                string_event(u64::from(t) * 2, i + t as usize),
            ],
            reply: format!("reply: {}", pick(i + 2 + t as usize)),
        })
        .collect();
    EpisodeRecord {
        index,
        case: pick(i),
        setting: Setting::Multi,
        target: pick(i + 1),
        rep: 0,
        status: if index == 3 {
            gauntlet_cases::EpisodeStatus::Errored
        } else {
            gauntlet_cases::EpisodeStatus::Ok
        },
        error: (index == 3).then(|| pick(i + 2)),
        verdict: Verdict::decide(vec![
            Evidence {
                level: Level::State,
                predicate: pick(i + 3),
                value: None,
                error: Some(pick(i + 4)),
                events: vec![],
            },
            Evidence {
                level: Level::Tool,
                predicate: pick(i + 5),
                value: Some(index.is_multiple_of(2)),
                error: None,
                events: vec![1, 3],
            },
        ]),
        task_success: Some(false),
        task_success_error: Some(pick(i + 6)),
        stop: Stop::Budget,
        decisions: vec![
            ControllerDecision {
                turn: 1,
                rung: pick(i + 7),
                reason: pick(i + 8),
                message: pick(i + 1),
                inject: vec![PlacedInjection {
                    tool: pick(i + 9),
                    text: pick(i + 10),
                }],
                fallback: Some(pick(i + 14)),
            },
            // A decision for a turn that never ran.
            ControllerDecision {
                turn: 9,
                rung: pick(i + 11),
                reason: pick(i + 12),
                message: pick(i + 13),
                inject: vec![],
                fallback: None,
            },
        ],
        trace: Trace { turns },
        tokens: 10,
        controller_tokens: 0,
        final_state: json!({"mail": {"inbox": [pick(i + 14)]}}),
        delivered: Some(true),
        elapsed_us: None,
    }
}

fn summary() -> Summary {
    let cell = |r: usize, c: usize, v: u64, n: u64| SliceCell {
        row: pick(r),
        col: pick(c),
        counts: counts(v, n),
        asr: rate(v, n),
    };
    Summary {
        by: Default::default(),
        episodes: 8,
        errored: 1,
        undetermined: 1,
        by_target_setting: vec![TargetSettingRow {
            target: pick(1),
            setting: Setting::Multi,
            counts: counts(2, 6),
            asr: rate(2, 6),
            asr_benign_passing: rate(1, 4),
            utility: rate(0, 0),
            pass_hat_k: Some(rate(1, 2)),
            delivery: rate(6, 6),
            asr_delivered: rate(2, 6),
        }],
        by_risk_env: vec![cell(0, 1, 0, 4), cell(2, 3, 1, 20), cell(4, 5, 3, 4)],
        by_env_attack: vec![cell(6, 7, 0, 0), cell(8, 9, 1, 5)],
        by_attack_risk: vec![cell(10, 11, 2, 9), cell(12, 13, 1, 1)],
        breaking_rungs: vec![RungCount {
            target: pick(1),
            setting: Setting::Multi,
            rung: pick(5),
            violated: 2,
        }],
        by_target: vec![gauntlet_cases::run::TargetSlices {
            target: pick(14),
            by_risk_env: vec![cell(0, 1, 0, 4)],
            by_env_attack: vec![cell(6, 7, 0, 0)],
            by_attack_risk: vec![cell(10, 11, 2, 9)],
        }],
    }
}

fn rt_case(index: usize) -> RtCase {
    let i = index * 5;
    RtCase {
        index,
        target: pick(i),
        vulnerability: pick(i + 1),
        subtype: pick(i + 2),
        attack: pick(i + 3),
        seed: pick(i + 4),
        input: pick(i + 5),
        attack_changed_input: true,
        attack_fallback: Some(pick(i + 6)),
        turns: vec![gauntlet_redteam::multi_turn::Turn {
            input: pick(i + 7),
            output: pick(i + 8),
            refused: false,
            discarded: true,
            replay: true,
        }],
        seed_source: pick(i + 9),
        seed_fallback: Some(pick(i + 10)),
        output: pick(i + 11),
        tool_calls: vec![event(1, i), string_event(2, i)],
        judgement: RtJudgement {
            outcome: [
                RtOutcome::Fail,
                RtOutcome::Pass,
                RtOutcome::Error,
                RtOutcome::Unjudged,
            ][index % 4],
            score: Some(0.0),
            reason: pick(i + 12),
            judged_by: gauntlet_judge::redteam::JudgedBy::Rubric,
        },
        error: (index % 4 == 2).then(|| pick(i + 14)),
    }
}

fn tally() -> Tally {
    Tally {
        passing: 3,
        failing: 1,
        errored: 1,
        unjudged: 0,
        pass_rate: Some(0.75),
    }
}

fn rt_report() -> Report {
    let mut r = Report {
        overall: tally(),
        ..Report::default()
    };
    for i in 0..payloads().len() {
        r.by_target.insert(pick(i), tally());
        r.by_vulnerability.insert(pick(i + 1), tally());
        r.by_subtype.insert(pick(i + 2), tally());
        r.by_attack.insert(pick(i + 3), tally());
        r.by_framework.insert(pick(i + 4), tally());
    }
    // Two targets, each with its own rows: their names and keys are payloads too.
    for i in 0..2 {
        let own = r.per_target.entry(pick(i + 5)).or_default();
        own.by_vulnerability.insert(pick(i + 6), tally());
        own.by_attack.insert(pick(i + 7), tally());
    }
    r
}

fn run_report() -> String {
    let config = RunConfig {
        settings: vec![Setting::Multi],
        repeat: 1,
        concurrency: 1,
        seed: 7,
        max_turns: 10,
        shard: None,
        by: Default::default(),
    };
    let header = RunHeader::new(
        &config,
        &[pick(1), pick(2)],
        &pick(3),
        &(0..8).map(pick).collect::<Vec<_>>(),
    );
    let mut episodes = (0..8).map(episode);
    run_html(
        &all(),
        &header,
        &summary(),
        &mut episodes,
        &HtmlOptions::default(),
    )
}

fn redteam_report() -> String {
    let mut cases = (0..8).map(rt_case);
    redteam_html(
        &pick(0),
        &all(),
        &rt_report(),
        &mut cases,
        &HtmlOptions::default(),
    )
}

/// Elements the reports are made of; anything else came from the data.
const ALLOWED_ELEMENTS: &[&str] = &[
    "html", "head", "body", "meta", "title", "style", "h1", "h2", "h3", "p", "table", "tbody",
    "tr", "th", "td", "details", "summary", "div", "span", "pre", "code", "mark", "b", "small",
    "footer", "a", "input", "label",
];
const FORBIDDEN_ELEMENTS: &[&str] = &[
    "script", "iframe", "svg", "img", "math", "object", "embed", "form", "base", "link", "textarea",
];
const ALLOWED_ATTRIBUTES: &[&str] = &[
    "class",
    "title",
    "lang",
    "charset",
    "http-equiv",
    "content",
    "name",
    "id",
    "href",
    // The drill-down's filter: radio buttons and their labels, read by CSS.
    "type",
    "checked",
    "for",
];

/// The only links a report has: to its own episodes (`#ep-N`) and cells (`#ts-N`, `#sl-N`).
fn in_page_link(href: &str) -> bool {
    let rest = href
        .strip_prefix("#ep-")
        .or_else(|| href.strip_prefix("#ts-"))
        .or_else(|| href.strip_prefix("#sl-"));
    rest.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

struct Dom {
    elements: Vec<String>,
    attributes: Vec<(String, String)>,
    text: String,
    styles: Vec<String>,
    metas: Vec<Vec<(String, String)>>,
    errors: Vec<String>,
}

fn walk(h: &Handle, in_style: bool, d: &mut Dom) {
    match &h.data {
        NodeData::Element { name, attrs, .. } => {
            let tag = name.local.to_string();
            let attrs: Vec<(String, String)> = attrs
                .borrow()
                .iter()
                .map(|a| (a.name.local.to_string(), a.value.to_string()))
                .collect();
            if tag == "meta" {
                d.metas.push(attrs.clone());
            }
            if tag == "style" {
                d.styles.push(String::new());
            }
            d.attributes.extend(attrs);
            d.elements.push(tag.clone());
            for c in h.children.borrow().iter() {
                walk(c, tag == "style", d);
            }
        }
        NodeData::Text { contents } => {
            if in_style {
                if let Some(s) = d.styles.last_mut() {
                    s.push_str(&contents.borrow());
                }
            } else {
                d.text.push_str(&contents.borrow());
            }
        }
        _ => {
            for c in h.children.borrow().iter() {
                walk(c, in_style, d);
            }
        }
    }
}

fn parse(html: &str) -> Dom {
    let dom = html5ever::parse_document(RcDom::default(), Default::default()).one(html);
    let mut d = Dom {
        elements: vec![],
        attributes: vec![],
        text: String::new(),
        styles: vec![],
        metas: vec![],
        errors: dom.errors.borrow().iter().map(|e| e.to_string()).collect(),
    };
    walk(&dom.document, false, &mut d);
    d
}

fn assert_inert(html: &str, must_show: &[String]) {
    assert!(!html.contains('\0'), "NUL in the output");
    let d = parse(html);
    assert!(d.errors.is_empty(), "parse errors: {:?}", d.errors);
    for e in &d.elements {
        assert!(
            !FORBIDDEN_ELEMENTS.contains(&e.as_str()),
            "forbidden element <{e}>"
        );
        assert!(
            ALLOWED_ELEMENTS.contains(&e.as_str()),
            "unexpected element <{e}>"
        );
    }
    for (name, value) in &d.attributes {
        assert!(
            !name.to_ascii_lowercase().starts_with("on"),
            "event handler attribute {name}={value}"
        );
        assert!(
            !value.to_ascii_lowercase().contains("javascript:"),
            "javascript: URL in {name}={value}"
        );
        assert!(
            ALLOWED_ATTRIBUTES.contains(&name.as_str()),
            "unexpected attribute {name}={value}"
        );
        assert!(
            name != "href" || in_page_link(value),
            "a link out of the report: {name}={value}"
        );
    }
    // The only style sheet is the report's own.
    assert_eq!(d.styles.len(), 1);
    assert!(!d.styles[0].contains("PWNED") && !d.styles[0].contains('<'));
    // The CSP is there and the only http-equiv.
    let csp: Vec<&Vec<(String, String)>> = d
        .metas
        .iter()
        .filter(|m| m.iter().any(|(k, _)| k == "http-equiv"))
        .collect();
    assert_eq!(csp.len(), 1);
    assert!(csp[0].iter().any(|(k, v)| k == "content"
        && v.starts_with("default-src 'none'; style-src 'unsafe-inline'; img-src data:")));
    for s in must_show {
        assert!(
            d.text.contains(&visible(s)),
            "not shown as text: {s:?}\n--- text ---\n{}",
            d.text
        );
    }
}

/// Where `.ci/html-chromium.sh` should find the reports, if asked.
fn write_out(run: &str, redteam: &str) {
    if let Ok(path) = std::env::var("GAUNTLET_HOSTILE_HTML_OUT") {
        let path = std::path::PathBuf::from(path);
        let rt = path.with_file_name(format!(
            "{}-redteam.html",
            path.file_stem()
                .map_or("hostile".into(), |s| s.to_string_lossy())
        ));
        std::fs::write(&path, run).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        std::fs::write(&rt, redteam).unwrap_or_else(|e| panic!("{}: {e}", rt.display()));
    }
}

#[test]
fn hostile_content_renders_as_inert_text() {
    let run = run_report();
    let redteam = redteam_report();
    write_out(&run, &redteam);
    let mut shown = payloads();
    shown.push(format!("reply: {}", pick(5)));
    assert_inert(&run, &shown);
    assert_inert(&redteam, &payloads());
    // The injected text is marked inside the observed result.
    let d = parse(&run);
    assert!(d.elements.iter().any(|e| e == "mark"));
    assert!(run.contains("<mark>INJ1 "), "no marked injection");
    // Whole-string results are shown as the text the agent read, with the prefixed payload marked.
    assert!(run.contains(&format!(
        "<mark>{}</mark>",
        gauntlet_report::html::escape(&pick(4))
    )));
}

#[test]
fn drill_down_prefers_errored_then_violated_and_counts_the_rest() {
    let config = RunConfig {
        settings: vec![Setting::Multi],
        repeat: 1,
        concurrency: 1,
        seed: 0,
        max_turns: 1,
        shard: None,
        by: Default::default(),
    };
    let header = RunHeader::new(&config, &["t".into()], "allow-all", &["c".into()]);
    let mut eps = (0..10).map(|i| {
        let mut e = episode(i);
        e.status = if i == 7 {
            gauntlet_cases::EpisodeStatus::Errored
        } else {
            gauntlet_cases::EpisodeStatus::Ok
        };
        e.verdict.outcome = if i == 5 || i == 8 {
            Outcome::Violated
        } else {
            Outcome::Held
        };
        e
    });
    let html = run_html(
        "run-1",
        &header,
        &summary(),
        &mut eps,
        &HtmlOptions {
            max_detail: 3,
            // Episode 5 (case pick(15)) is shown and falls in the risk × environment cell (pick(2), pick(3)).
            slices: [(pick(15), [pick(2), pick(3), pick(12)])].into(),
            unfinished: None,
        },
    );
    let order: Vec<usize> = html
        .match_indices("</span><b>#")
        .filter_map(|(i, _)| {
            let rest = &html[i + "</span><b>#".len()..];
            rest[..rest.find('<')?].parse().ok()
        })
        .collect();
    assert_eq!(order, vec![7, 5, 8]);
    // Every in-page link leads somewhere: the rows of shown episodes by cell, and the episodes themselves.
    let links: Vec<&str> = html
        .split("href=\"#")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(links.iter().any(|l| l.starts_with("ep-")), "{links:?}");
    assert!(links.contains(&"sl-0"), "{links:?}");
    let row = html.split("id=\"sl-0\">").nth(1).unwrap_or_default();
    let row = &row[..row.find("</tr>").unwrap_or(0)];
    assert!(
        row.contains("href=\"#ep-5\"") && row.contains("risk × environment"),
        "{row}"
    );
    for l in &links {
        assert!(html.contains(&format!("id=\"{l}\"")), "#{l} leads nowhere");
    }
    assert!(html.contains("Shown in detail: 3 of 10 episodes"));
    // The filter: one radio button per group, and each group in the block its button shows alone.
    for (i, name) in ["Errored", "Violated", "Undetermined", "Held"]
        .iter()
        .enumerate()
    {
        assert!(
            html.contains(&format!("id=\"flt-{i}\"><label for=\"flt-{i}\">{name} (")),
            "{name}"
        );
    }
    let at = |needle: &str| html.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    let (errored, violated) = (at("<div class=\"g g0\">"), at("<div class=\"g g1\">"));
    assert!(errored < at("id=\"ep-7\"") && at("id=\"ep-7\"") < violated);
    assert!(violated < at("id=\"ep-5\"") && at("id=\"ep-5\"") < at("id=\"ep-8\""));
    assert!(html.trim_end().ends_with("</html>") && html.contains("</div></div>\n"));
    assert!(html.contains("gauntlet report run-1 --format jsonl"));
}

#[test]
fn privilege_report_is_inert() {
    use gauntlet_privilege::score::{AxisLeakage, Census, DefenseScore};
    let mut census = Census {
        probes: 3,
        ..Census::default()
    };
    census.by_axis.insert(all(), 3);
    census.by_label.insert(pick(2), 1);
    let score = DefenseScore {
        defense: all(),
        axes: gauntlet_defense::Axes::ALL,
        sufficiency: rate(2, 3),
        gate_passed: false,
        leakage: Some(0.5),
        leakage_by_axis: vec![AxisLeakage {
            axis: gauntlet_privilege::probe::Axis::Tool,
            declared: false,
            leakage: Some(0.25),
            admitted_weight: 1,
            total_weight: 4,
        }],
        over_restriction: rate(0, 3),
        attack_admission: rate(1, 2),
        decisions: 9,
    };
    // What the defense let through: task ids, tools and arguments are attacker-influenced text.
    let admitted = gauntlet_privilege::score::Admitted {
        task: pick(1),
        point: 2,
        family: gauntlet_privilege::probe::Family::Parameter,
        fault: gauntlet_privilege::probe::Fault::UntrustedRecipient,
        tool: pick(4),
        tier: gauntlet_core::HarmTier::H4,
        source: gauntlet_privilege::probe::Source::Confirmed,
        args: serde_json::json!({"to": pick(5)}).to_string(),
    };
    let html = privilege_html(&pick(0), &census, &[score], &[(vec![admitted], 3)]);
    assert_inert(&html, &payloads());
    assert!(html.contains("N/A (25.0%)"));
    assert!(html.contains("What each defense let through") && html.contains("… and 2 more."));
}

/// Not a check but a measurement (`--ignored`, release build): renders a 100,000-episode run and prints the time
/// and size, against the goal of ≤ 5 s and ≤ 20 MB. The episodes come from a `gauntlet run --json` document
/// given in `GAUNTLET_HTML_BENCH_RUN`, cycled and re-indexed, or else are synthetic;
/// `GAUNTLET_HTML_BENCH_EPISODES` changes the count and `GAUNTLET_HTML_BENCH_OUT` keeps the report.
///
/// `GAUNTLET_HTML_BENCH_RUN=run.json cargo test --release -p gauntlet-report --test html -- --ignored --nocapture`
#[test]
#[ignore]
fn large_run_time_and_size() {
    let n: usize = std::env::var("GAUNTLET_HTML_BENCH_EPISODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let (header, summary, pool) = match std::env::var("GAUNTLET_HTML_BENCH_RUN") {
        Ok(path) => {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut doc: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
            let take =
                |doc: &mut Value, k: &str| doc.get_mut(k).map(Value::take).unwrap_or_default();
            let episodes: Vec<EpisodeRecord> = serde_json::from_value(take(&mut doc, "episodes"))
                .unwrap_or_else(|e| panic!("episodes: {e}"));
            let summary: Summary = serde_json::from_value(take(&mut doc, "summary"))
                .unwrap_or_else(|e| panic!("summary: {e}"));
            let header: RunHeader =
                serde_json::from_value(doc).unwrap_or_else(|e| panic!("header: {e}"));
            (header, summary, episodes)
        }
        Err(_) => {
            let config = RunConfig {
                settings: vec![Setting::Multi],
                repeat: 1,
                concurrency: 1,
                seed: 0,
                max_turns: 10,
                shard: None,
                by: Default::default(),
            };
            let header = RunHeader::new(&config, &["t".into()], "allow-all", &["c".into()]);
            (header, summary(), (0..64).map(episode).collect())
        }
    };
    let mut episodes = (0..n).map(|i| {
        let mut e = pool[i % pool.len()].clone();
        e.index = i;
        e
    });
    let start = std::time::Instant::now();
    let html = run_html(
        "bench",
        &header,
        &summary,
        &mut episodes,
        &HtmlOptions::default(),
    );
    let took = start.elapsed();
    println!(
        "{n} episodes: HTML rendered in {:.2} s, {:.1} MB",
        took.as_secs_f64(),
        html.len() as f64 / 1e6
    );
    if let Ok(out) = std::env::var("GAUNTLET_HTML_BENCH_OUT") {
        std::fs::write(&out, &html).unwrap_or_else(|e| panic!("{out}: {e}"));
    }
    assert!(html.len() <= 20_000_000);
}
