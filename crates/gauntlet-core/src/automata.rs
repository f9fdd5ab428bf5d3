//! Patterns as lazy DFAs (regex-automata's hybrid engine), with one cache per pattern shared by every thread: the
//! refusal screen's tables and the patterns of verifiers' `matches`.
//!
//! Why not `regex::Regex`: its engine keeps a Pike VM, a one-pass DFA, a backtracker and a reverse lazy DFA beside
//! the forward one, and every thread that searches gets caches for all of them, sized by the NFA's states. The
//! screen's tables have about 155,000 states, so each worker thread cost about 24 MB before it screened a single
//! reply; the built-in suite's 127 `matches` patterns cost 6.9 MB compiled with one thread's caches, against 1.7 MB
//! here. Here every pattern is one forward lazy DFA with one cache. A table whose matches are
//! located finds their starts with anchored searches of the same automaton rather than with a reverse one (whose
//! cache would cost as much again), and the tables of declines share one multi-pattern automaton (strong, gated,
//! weak) instead of four.
//!
//! A lazy DFA search fails only on a Unicode word boundary (`\b` in a pattern of `matches`) that meets a non-ASCII
//! byte: the cache is cleared as often as needed rather than given up on, and the screen's tables have no `\b`.
//! A search that fails is answered by a Pike VM over the same patterns, never by a panic.

use regex_automata::hybrid::dfa::{self, DFA};
use regex_automata::nfa::thompson::{
    self,
    pikevm::{self, PikeVM},
};
use regex_automata::{Anchored, Input, PatternSet};

/// Bytes of lazy DFA states each table may keep before its cache is cleared; a table whose automaton
/// needs more than this just to search (the union of declines needs about 2.2 MB) gets that minimum instead. At
/// 4 MB the run job's peak was 3–4 MB higher for the same speed.
const CACHE_CAPACITY: usize = 1 << 20;

/// One table's lazy DFA cache, shared by every thread: a search holds its lock. Per-thread caches cost about 4 MB
/// for each thread that screens, and the red team runs 16 workers or more (111 MB against 54 MB for an offline red
/// team at 16 workers); with a lock per table, threads wait only when they search the same table at once.
#[derive(Default)]
struct Shared(std::sync::Mutex<Option<Box<dfa::Cache>>>);

impl Shared {
    /// Runs `search` with the cache, created from `dfa` the first time. A search that panicked may have left its
    /// cache half-updated, so a poisoned lock is taken over with a fresh cache rather than given up on.
    fn with<T>(&self, dfa: &DFA, search: impl FnOnce(&mut dfa::Cache) -> T) -> T {
        let mut cache = self.0.lock().unwrap_or_else(|poisoned| {
            self.0.clear_poison();
            let mut cache = poisoned.into_inner();
            *cache = None;
            cache
        });
        search(cache.get_or_insert_with(|| Box::new(dfa.create_cache())))
    }
}

/// A match: its span in the haystack and the index of the pattern (for a table of several).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    /// Byte offset of the start.
    pub start: usize,
    /// Byte offset just past the end.
    pub end: usize,
    /// Which of the table's patterns matched.
    pub pattern: usize,
}

/// The lazy DFA configuration of every pattern.
fn dfa_config() -> dfa::Config {
    dfa::Config::new()
        .cache_capacity(CACHE_CAPACITY)
        .skip_cache_capacity_check(true)
        .minimum_cache_clear_count(None)
        .unicode_word_boundary(true)
}

/// The largest NFA a pattern may compile to (`regex`'s own limit): a pattern written at run time must not take
/// the memory of the process.
const NFA_SIZE_LIMIT: usize = 10 << 20;

/// A pattern asked only whether it matches: one forward lazy DFA.
pub(crate) struct Matcher {
    cache: Shared,
    dfa: DFA,
    fallback: PikeVM,
    /// The Pike VM's cache, made the first time a lazy DFA search fails and kept for the next.
    fallback_cache: std::sync::Mutex<Option<pikevm::Cache>>,
}

impl Matcher {
    /// Compiles `pattern` (RE2 syntax as `regex` reads it); the error says what is wrong with it.
    pub(crate) fn new(pattern: &str) -> Result<Matcher, String> {
        let dfa = DFA::builder()
            .configure(dfa_config())
            .thompson(thompson::Config::new().nfa_size_limit(Some(NFA_SIZE_LIMIT)))
            .build(pattern)
            .map_err(|e| error_chain(&e))?;
        let fallback = PikeVM::new_from_nfa(dfa.get_nfa().clone()).map_err(|e| error_chain(&e))?;
        Ok(Matcher {
            cache: Shared::default(),
            dfa,
            fallback,
            fallback_cache: std::sync::Mutex::new(None),
        })
    }

    /// Does the pattern match anywhere in `haystack`?
    pub(crate) fn is_match(&self, haystack: &str) -> bool {
        let input = Input::new(haystack).earliest(true);
        let searched = self
            .cache
            .with(&self.dfa, |c| self.dfa.try_search_fwd(c, &input).ok());
        match searched {
            Some(found) => found.is_some(),
            None => {
                let mut cache = self
                    .fallback_cache
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let cache = cache.get_or_insert_with(|| self.fallback.create_cache());
                self.fallback.is_match(cache, input)
            }
        }
    }
}

/// An error and its causes, joined: a build error's own text only says which step failed.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

/// A table whose matches are located (start and end), of one or several patterns, leftmost-first as `regex`
/// matches. One forward lazy DFA does it all: an unanchored search finds where the leftmost match ends, and
/// anchored searches from the character boundaries before that end find where it starts (the first that matches
/// is the leftmost start). A reverse automaton would do the second step in one pass, but its cache costs as much
/// as the forward one's (2.2 MB for the declines), and the texts screened are short.
pub(crate) struct Finder {
    cache: Shared,
    dfa: DFA,
    /// The patterns, for a fallback Pike VM built only if a lazy DFA search ever fails.
    patterns: Vec<String>,
    fallback: std::sync::OnceLock<Option<PikeVM>>,
}

impl Finder {
    /// Compiles one pattern per table of `patterns`.
    pub(crate) fn new(patterns: &[String]) -> Result<Finder, String> {
        let dfa = DFA::builder()
            .configure(dfa_config().starts_for_each_pattern(true))
            .build_many(patterns)
            .map_err(|e| e.to_string())?;
        Ok(Finder {
            cache: Shared::default(),
            dfa,
            patterns: patterns.to_vec(),
            fallback: std::sync::OnceLock::new(),
        })
    }

    /// The Pike VM used when a lazy DFA search fails (never, with this configuration; see the module doc).
    fn fallback(&self) -> Option<&PikeVM> {
        self.fallback
            .get_or_init(|| PikeVM::new_many(&self.patterns).ok())
            .as_ref()
    }

    /// Runs forward searches with the table's cache; `None` if one failed.
    fn with_dfa<T>(&self, run: impl FnOnce(&DFA, &mut dfa::Cache) -> Option<T>) -> Option<T> {
        self.cache.with(&self.dfa, |c| run(&self.dfa, c))
    }

    /// The leftmost-first match at or after `from`.
    fn search(&self, haystack: &str, from: usize) -> Option<Found> {
        let searched = self.with_dfa(|dfa, cache| {
            let Some(end) = dfa
                .try_search_fwd(cache, &Input::new(haystack).range(from..))
                .ok()?
            else {
                return Some(None);
            };
            for start in (from..=end.offset()).filter(|&i| haystack.is_char_boundary(i)) {
                let input = Input::new(haystack).range(start..).anchored(Anchored::Yes);
                if let Some(m) = dfa.try_search_fwd(cache, &input).ok()? {
                    return Some(Some(Found {
                        start,
                        end: m.offset(),
                        pattern: m.pattern().as_usize(),
                    }));
                }
            }
            None
        });
        let m = match searched {
            Some(found) => return found,
            None => {
                let vm = self.fallback()?;
                vm.find(&mut vm.create_cache(), Input::new(haystack).range(from..))
            }
        }?;
        Some(Found {
            start: m.start(),
            end: m.end(),
            pattern: m.pattern().as_usize(),
        })
    }

    /// The first match.
    pub(crate) fn find(&self, haystack: &str) -> Option<Found> {
        self.search(haystack, 0)
    }

    /// Does any pattern match?
    pub(crate) fn is_match(&self, haystack: &str) -> bool {
        let searched = self.with_dfa(|dfa, cache| {
            dfa.try_search_fwd(cache, &Input::new(haystack).earliest(true))
                .ok()
        });
        match searched {
            Some(found) => found.is_some(),
            None => self.find(haystack).is_some(),
        }
    }

    /// Every successive non-overlapping match, as `regex`'s `find_iter` gives them.
    pub(crate) fn find_all(&self, haystack: &str) -> Vec<Found> {
        let mut out = Vec::new();
        let mut from = 0;
        while from <= haystack.len() {
            let Some(m) = self.search(haystack, from) else {
                break;
            };
            from = if m.end > m.start {
                m.end
            } else {
                // An empty match: step over one character, as `regex` does.
                m.end + haystack[m.end..].chars().next().map_or(1, char::len_utf8)
            };
            if m.end == m.start && out.last().is_some_and(|p: &Found| p.end == m.end) {
                continue;
            }
            out.push(m);
        }
        out
    }

    /// Does pattern `pattern` match anywhere in `haystack`, whatever else matches before or around it? (An
    /// anchored search for that pattern alone from each character boundary.)
    pub(crate) fn matches_pattern(&self, haystack: &str, pattern: usize) -> bool {
        let Ok(id) = regex_automata::PatternID::new(pattern) else {
            return false;
        };
        let searched = self.with_dfa(|dfa, cache| {
            for start in (0..=haystack.len()).filter(|&i| haystack.is_char_boundary(i)) {
                let input = Input::new(haystack)
                    .range(start..)
                    .anchored(Anchored::Pattern(id))
                    .earliest(true);
                if dfa.try_search_fwd(cache, &input).ok()?.is_some() {
                    return Some(true);
                }
            }
            Some(false)
        });
        match searched {
            Some(found) => found,
            None => {
                let mut set = PatternSet::new(self.dfa.pattern_len());
                if let Some(vm) = self.fallback() {
                    vm.which_overlapping_matches(
                        &mut vm.create_cache(),
                        &Input::new(haystack),
                        &mut set,
                    );
                }
                set.contains(id)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finder(patterns: &[&str]) -> Finder {
        let p: Vec<String> = patterns.iter().map(|s| s.to_string()).collect();
        Finder::new(&p).expect("compiles")
    }

    #[test]
    fn finds_what_regex_finds() {
        let patterns = ["can ?not (?:help|assist)", "not", "(?:^| )no(?: |$)"];
        let f = finder(&patterns);
        let joined = patterns
            .iter()
            .map(|p| format!("(?:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        let re = regex::Regex::new(&joined).expect("compiles");
        for hay in [
            " i cannot help , no . not now ",
            " no ",
            "",
            " nothing to see ",
            " é no é ",
        ] {
            let ours: Vec<(usize, usize)> =
                f.find_all(hay).iter().map(|m| (m.start, m.end)).collect();
            let theirs: Vec<(usize, usize)> =
                re.find_iter(hay).map(|m| (m.start(), m.end())).collect();
            assert_eq!(ours, theirs, "{hay:?}");
            assert_eq!(f.is_match(hay), re.is_match(hay));
        }
        let m = f.find(" i can not assist ").expect("a match");
        assert_eq!(m.pattern, 0);
        // The fallback (used only if a lazy DFA search failed) locates the same match.
        let vm = f.fallback().expect("a Pike VM");
        let m = vm
            .find(&mut vm.create_cache(), " i can not assist ")
            .expect("found");
        assert_eq!((m.start(), m.end(), m.pattern().as_usize()), (3, 17, 0));
        // The leftmost-first match is pattern 1 ("not" in "nothing"), yet pattern 2 matches later on.
        assert!(f.matches_pattern(" nothing , no ", 2));
        assert!(!f.matches_pattern(" nothing ", 2));
    }

    #[test]
    fn matchers_answer_on_every_thread() {
        let m = Matcher::new(r"(?m)^[ \t]*subject[ \t]*:").expect("compiles");
        assert!(m.is_match("hello\n  subject: hi"));
        std::thread::scope(|s| {
            s.spawn(|| assert!(!m.is_match("no subject here")));
        });
        assert!(!m.is_match("subjects: none"));
    }
}
