//! Words a server chooses (reason phrases, WebSocket close reasons,
//! `grpc-message`) as a record keeps them: cut to [`MAX_SERVER_WORDS`]
//! bytes, marked as cut. A record's error is repeated in the stream's
//! string table and in every report's error set, so a server that sends
//! 60 KB phrases must not make the attack or a report hold gigabytes
//! (issue 29).

/// A count with thousands separators, as reports and messages print
/// them: `1,234,567`.
pub fn thousands(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The most bytes of server-chosen words a record keeps.
pub const MAX_SERVER_WORDS: usize = 1024;

/// How a cut is marked.
pub const CUT: &str = "…(cut)";

/// `bytes` as text (invalid UTF-8 replaced), at most
/// [`MAX_SERVER_WORDS`] bytes of it, then [`CUT`] when there was more.
pub fn server_words(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_SERVER_WORDS + 4)]);
    cut(&text, MAX_SERVER_WORDS, bytes.len() > MAX_SERVER_WORDS)
}

/// `text` cut to at most `max` bytes on a character boundary, with
/// [`CUT`] added when anything was cut (or `more` says the source had
/// more than `text`).
pub fn cut(text: &str, max: usize, more: bool) -> String {
    if text.len() <= max && !more {
        return text.to_string();
    }
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + CUT.len());
    out.push_str(&text[..end]);
    out.push_str(CUT);
    out
}

/// `text` for a person's screen: control characters (a line feed, an
/// escape that recolours the terminal) shown as escapes, so that a server
/// cannot forge a report's lines (issue 29). Text without any is returned
/// as it is.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `url` with the password of its user info replaced by `xxxxx` (Go's
/// `URL.Redacted`), for whatever is printed.
pub fn redacted(url: &str) -> std::borrow::Cow<'_, str> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return std::borrow::Cow::Borrowed(url);
    };
    let Some(colon) = rest[..at].find(':') else {
        return std::borrow::Cow::Borrowed(url);
    };
    std::borrow::Cow::Owned(format!(
        "{}{}:xxxxx{}",
        &url[..start],
        &rest[..colon],
        &rest[at..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_words_are_cut_and_marked() {
        assert_eq!(server_words(b"Backend Down"), "Backend Down");
        let long = vec![b'x'; 60_000];
        let w = server_words(&long);
        assert_eq!(w.len(), MAX_SERVER_WORDS + CUT.len());
        assert!(w.ends_with(CUT));
        // On a character boundary.
        let mut multi = "é".repeat(600).into_bytes();
        multi.push(b'!');
        let w = server_words(&multi);
        assert!(
            w.ends_with(CUT) && w.len() <= MAX_SERVER_WORDS + CUT.len(),
            "{w}"
        );
        assert_eq!(cut("abc", 10, true), "abc…(cut)");
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            redacted("http://alice:s3cret@example.com/a@b"),
            "http://alice:xxxxx@example.com/a@b"
        );
        assert_eq!(
            redacted("http://alice@example.com/"),
            "http://alice@example.com/"
        );
        assert_eq!(
            redacted("http://example.com/x:y@z"),
            "http://example.com/x:y@z"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("plain words"), "plain words");
        assert_eq!(
            printable("bye\nStatus Codes  [code:count]  200:1\x1b[2J"),
            "bye\\nStatus Codes  [code:count]  200:1\\u{1b}[2J"
        );
    }
}

/// The first `n` distinct of `items`, in order, then "and N more" when
/// there are others (a page's run table names a run's first targets).
pub fn first_distinct<'a>(items: impl IntoIterator<Item = &'a str>, n: usize) -> Vec<String> {
    let mut distinct: Vec<&str> = Vec::new();
    for item in items {
        if !distinct.contains(&item) {
            distinct.push(item);
        }
    }
    let mut shown: Vec<String> = distinct.iter().take(n).map(|u| u.to_string()).collect();
    if distinct.len() > n {
        shown.push(format!("and {} more", distinct.len() - n));
    }
    shown
}

#[cfg(test)]
mod first_distinct_tests {
    #[test]
    fn the_first_few_then_how_many_more() {
        let all = ["a", "b", "a", "c", "d", "e"];
        assert_eq!(super::first_distinct(all, 3), ["a", "b", "c", "and 2 more"]);
        assert_eq!(super::first_distinct(["a", "a"], 3), ["a"]);
    }
}

/// A command line (`args`, the program's first) as a page shows it: the program's name without its
/// path, words quoted for a shell where needed, header values hidden.
pub fn shown_command(args: impl Iterator<Item = String>) -> String {
    // Header values (credentials, often) are not kept: their names are.
    let mut after_header = false;
    let command: Vec<String> = args
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                // The program's name, not where it lies on this machine.
                return std::path::Path::new(&w)
                    .file_name()
                    .map_or(w.clone(), |n| n.to_string_lossy().into_owned());
            }
            let flag = w.trim_start_matches('-');
            let redact = after_header || flag.starts_with("header=");
            after_header = w.starts_with('-') && flag == "header";
            if redact {
                let (head, _) = w.split_once(':').unwrap_or((&w, ""));
                format!("{head}: ***")
            } else {
                w
            }
        })
        .collect::<Vec<String>>()
        .into_iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,%+".contains(c))
            {
                w
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect();
    cut(&command.join(" "), 1000, false)
}

#[cfg(test)]
mod shown_command_tests {
    #[test]
    fn a_command_keeps_its_words_and_hides_header_values() {
        let args = [
            "/usr/local/bin/barrage",
            "attack",
            "-header",
            "Authorization: Bearer s3cret",
            "--header=X-Key: k",
            "-rate",
            "5",
            "it's",
        ];
        assert_eq!(
            super::shown_command(args.iter().map(|s| s.to_string())),
            "barrage attack -header 'Authorization: ***' '--header=X-Key: ***' -rate 5 'it'\\''s'"
        );
    }
}
