//! Head-and-tail excerpts of oversized text, the cut marked: what Gauntlet keeps of a tool result, reply or
//! defense reason that an agent, a tool or a defense made too large to store whole. Verdicts are reached on the
//! whole text first; only what is kept (the store, `--json`, reports) is cut.

use serde_json::Value;
use std::borrow::Cow;

/// The most kept of one stored text (a reply, a user turn, a string inside a call's arguments or a result).
pub const STORED_TEXT_MAX: usize = 1 << 20;

/// The most kept of a defense's reason or an error message.
pub const STORED_REASON_MAX: usize = 64 << 10;

/// `text` cut to about `max` bytes: its head and tail, with the cut marked (on character boundaries).
pub fn head_and_tail(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut head = max / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - max / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let cut = tail - head;
    Cow::Owned(format!(
        "{}\n[… {cut} bytes cut …]\n{}",
        &text[..head],
        &text[tail..]
    ))
}

/// Cuts `text` in place to [`head_and_tail`] of `max`.
pub fn cap(text: &mut String, max: usize) {
    if let Cow::Owned(cut) = head_and_tail(text, max) {
        *text = cut;
    }
}

/// Cuts every string inside `value` (object keys aside) to `max` bytes.
pub fn cap_value(value: &mut Value, max: usize) {
    match value {
        Value::String(s) => cap(s, max),
        Value::Array(items) => items.iter_mut().for_each(|v| cap_value(v, max)),
        Value::Object(fields) => fields.values_mut().for_each(|v| cap_value(v, max)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_text_is_kept_and_long_text_keeps_its_ends_with_the_cut_marked() {
        assert!(matches!(head_and_tail("short", 10), Cow::Borrowed("short")));
        let long = format!("{}{}", "a".repeat(100), "z".repeat(100));
        let cut = head_and_tail(&long, 20);
        assert_eq!(
            cut,
            format!(
                "{}\n[… 180 bytes cut …]\n{}",
                "a".repeat(10),
                "z".repeat(10)
            )
        );
        let mut v = serde_json::json!({"out": "x".repeat(50), "n": 1, "list": ["y".repeat(50)]});
        cap_value(&mut v, 10);
        assert_eq!(v["out"], "xxxxx\n[… 40 bytes cut …]\nxxxxx");
        assert_eq!(v["list"][0], "yyyyy\n[… 40 bytes cut …]\nyyyyy");
        assert_eq!(v["n"], 1);
    }

    proptest! {
        /// Any text, any limit: the excerpt is valid UTF-8 of bounded size, and whole when it fits.
        #[test]
        fn excerpts_are_bounded_and_whole_when_they_fit(text in "\\PC{0,300}", max in 0usize..400) {
            let cut = head_and_tail(&text, max);
            if text.len() <= max {
                prop_assert_eq!(cut.as_ref(), text.as_str());
            } else {
                prop_assert!(cut.len() <= max + 64, "{} > {}", cut.len(), max + 64);
                prop_assert!(cut.contains("bytes cut"));
            }
        }
    }
}
