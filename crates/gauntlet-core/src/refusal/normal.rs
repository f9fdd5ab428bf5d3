//! The normal form of a reply that the refusal screen's patterns and its learned model read: lowercased tokens
//! separated by single spaces, quoted passages removed, English contractions expanded. Plain `std` only: the
//! build script that trains the model includes this file too.

use std::borrow::Cow;

/// The normal form the screen and the model read: [`normalise`] of the [`unquoted`] text, without single-quoted
/// passages.
pub(crate) fn normal_form(text: &str) -> String {
    without_single_quoted(&normalise(&unquoted(text)))
}

/// The text with quoted passages removed: a reply quoting someone else's refusal is not refusing.
pub(crate) fn unquoted(text: &str) -> Cow<'_, str> {
    let pairs = [('"', '"'), ('“', '”'), ('«', '»'), ('「', '」'), ('„', '“')];
    if !text.contains(['"', '“', '«', '「', '„']) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut close: Option<char> = None;
    for c in text.chars() {
        match close {
            Some(end) if c == end => close = None,
            Some(_) => {}
            None => match pairs.iter().find(|(open, _)| *open == c) {
                Some((_, end)) => close = Some(*end),
                None => out.push(c),
            },
        }
    }
    Cow::Owned(out)
}

/// An English contraction expanded ("can't" → "cannot"), or `None`.
fn expand_contraction(token: &str) -> Option<String> {
    let fixed = match token {
        "can't" => "cannot",
        "won't" => "will not",
        "ain't" => "is not",
        "shan't" => "shall not",
        "let's" => "let us",
        "gonna" => "going to",
        "wanna" => "want to",
        "i'm" => "i am",
        _ => "",
    };
    if !fixed.is_empty() {
        return Some(fixed.to_string());
    }
    for (suffix, word) in [
        ("n't", "not"),
        ("'ll", "will"),
        ("'d", "would"),
        ("'re", "are"),
        ("'ve", "have"),
    ] {
        if let Some(stem) = token.strip_suffix(suffix)
            && !stem.is_empty()
            && stem.is_ascii()
        {
            return Some(format!("{stem} {word}"));
        }
    }
    let stem = token.strip_suffix("'s")?;
    matches!(
        stem,
        "that" | "it" | "here" | "there" | "what" | "who" | "he" | "she" | "where" | "this"
    )
    .then(|| format!("{stem} is"))
}

/// The text lowercased, as tokens separated by single spaces with a space at both ends: words (letters and digits,
/// with inner apostrophes and hyphens) and single punctuation marks; line breaks become `¶`, English contractions
/// are expanded and `ё` is `е`.
pub(crate) fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4 + 2);
    out.push(' ');
    let mut word = String::new();
    let lower = text.to_lowercase();
    let mut chars = lower
        .chars()
        .map(|c| match c {
            '’' | '‘' | 'ʼ' | '´' => '\'',
            'ё' => 'е',
            _ => c,
        })
        .peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || (!c.is_ascii() && c.is_alphanumeric()) {
            word.push(c);
            continue;
        }
        if (c == '\'' || c == '-')
            && !word.is_empty()
            && chars.peek().is_some_and(|n| n.is_alphanumeric())
        {
            word.push(c);
            continue;
        }
        push_word(&mut out, &mut word);
        if c == '\n' {
            out.push_str("¶ ");
        } else if !c.is_whitespace() {
            out.push(c);
            out.push(' ');
        }
    }
    push_word(&mut out, &mut word);
    out
}

/// A normalised text without passages in single quotes ("type 'i cannot comply' to test it"): a single quote
/// token, then at most 30 tokens, then another.
pub(crate) fn without_single_quoted(n: &str) -> String {
    if !n.contains(" ' ") {
        return n.to_string();
    }
    let tokens: Vec<&str> = n.split(' ').filter(|t| !t.is_empty()).collect();
    let mut keep = vec![true; tokens.len()];
    let mut open: Option<usize> = None;
    for (i, token) in tokens.iter().enumerate() {
        if *token != "'" {
            continue;
        }
        match open {
            Some(o) if i - o <= 31 => {
                keep[o..=i].iter_mut().for_each(|k| *k = false);
                open = None;
            }
            _ => open = Some(i),
        }
    }
    let kept: Vec<&str> = tokens
        .iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(*t))
        .collect();
    format!(" {} ", kept.join(" "))
}

/// Appends a word token (contractions expanded) and its space, and empties `word`.
fn push_word(out: &mut String, word: &mut String) {
    if word.is_empty() {
        return;
    }
    let expanded = if word.contains('\'') || word == "gonna" || word == "wanna" {
        expand_contraction(word)
    } else {
        None
    };
    out.push_str(expanded.as_deref().unwrap_or(word));
    out.push(' ');
    word.clear();
}
