//! curl commands split into words as a POSIX shell splits them: `'…'`,
//! `"…"` (with its four escapes), `$'…'` (ANSI-C escapes), backslashes,
//! `\` at a line's end, `#` comments; an unquoted line end ends a command.
//! Hand-written: the `shell-words` crate has no `$'…'` (which Chrome's
//! copies use for bodies with quotes or control bytes) and does not give
//! line numbers for errors.

use crate::{error::error, BadValue, TargetError};

/// A word of a command and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Word {
    pub(super) text: String,
    pub(super) line: u64,
}

/// Splits `text` into commands of words, as a shell would.
pub(super) fn commands(text: &str, source: &str) -> Result<Vec<Vec<Word>>, TargetError> {
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut word: Option<Word> = None;
    let mut line = 1u64;
    let mut chars = text.chars().peekable();
    let start = |word: &mut Option<Word>, line: u64| {
        word.get_or_insert_with(|| Word {
            text: String::new(),
            line,
        })
        .line
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\r' => {
                if c == '\r' && chars.peek() != Some(&'\n') {
                    start(&mut word, line);
                    word.as_mut().unwrap().text.push(c);
                    continue;
                }
                words.extend(word.take());
            }
            '\n' => {
                words.extend(word.take());
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
                line += 1;
            }
            '#' if word.is_none() => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some('\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                    line += 1;
                }
                Some(next) => {
                    start(&mut word, line);
                    word.as_mut().unwrap().text.push(next);
                }
                None => {}
            },
            '\'' => {
                let at = line;
                start(&mut word, line);
                let w = word.as_mut().unwrap();
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => {
                            line += u64::from(c == '\n');
                            w.text.push(c);
                        }
                        None => return Err(error(source, at, "unterminated ' quote".into())),
                    }
                }
            }
            '"' => {
                let at = line;
                start(&mut word, line);
                let w = word.as_mut().unwrap();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => line += 1,
                            Some(e @ ('"' | '\\' | '$' | '`')) => w.text.push(e),
                            Some(other) => {
                                line += u64::from(other == '\n');
                                w.text.push('\\');
                                w.text.push(other);
                            }
                            None => return Err(error(source, at, "unterminated \" quote".into())),
                        },
                        Some(c) => {
                            line += u64::from(c == '\n');
                            w.text.push(c);
                        }
                        None => return Err(error(source, at, "unterminated \" quote".into())),
                    }
                }
            }
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                let at = line;
                start(&mut word, line);
                let text = &mut word.as_mut().unwrap().text;
                ansi_c(&mut chars, text, &mut line)
                    .map_err(|why| error(source, at, format!("$'…' quote: {why}")))?;
            }
            c => {
                start(&mut word, line);
                word.as_mut().unwrap().text.push(c);
            }
        }
    }
    words.extend(word);
    if !words.is_empty() {
        out.push(words);
    }
    Ok(out)
}

/// The rest of a `$'…'` quote, its escapes decoded into `out`.
pub(super) fn ansi_c(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    out: &mut String,
    line: &mut u64,
) -> Result<(), BadValue> {
    let mut bytes: Vec<u8> = Vec::new();
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars>, radix: u32, max: usize| {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            match chars.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    v = v * radix + d;
                    chars.next();
                    n += 1;
                }
                None => break,
            }
        }
        (v, n)
    };
    loop {
        let c = chars.next().ok_or("unterminated")?;
        match c {
            '\'' => break,
            '\\' => {
                let e = chars.next().ok_or("unterminated")?;
                match e {
                    'n' => bytes.push(b'\n'),
                    't' => bytes.push(b'\t'),
                    'r' => bytes.push(b'\r'),
                    'a' => bytes.push(7),
                    'b' => bytes.push(8),
                    'e' | 'E' => bytes.push(0x1b),
                    'f' => bytes.push(0x0c),
                    'v' => bytes.push(0x0b),
                    '\\' | '\'' | '"' | '?' => bytes.push(e as u8),
                    'x' => {
                        let (v, n) = digits(chars, 16, 2);
                        if n == 0 {
                            return Err("\\x without hex digits".into());
                        }
                        bytes.push(v as u8);
                    }
                    'u' | 'U' => {
                        let (v, n) = digits(chars, 16, if e == 'u' { 4 } else { 8 });
                        let c = char::from_u32(v).filter(|_| n > 0);
                        let c = c.ok_or_else(|| format!("\\{e} without a character"))?;
                        bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                    '0'..='7' => {
                        let (rest, n) = digits(chars, 8, 2);
                        let first = e.to_digit(8).unwrap_or(0);
                        bytes.push((first * 8u32.pow(n as u32) + rest) as u8);
                    }
                    other => {
                        bytes.push(b'\\');
                        bytes.extend_from_slice(other.encode_utf8(&mut [0; 4]).as_bytes());
                    }
                }
            }
            c => {
                *line += u64::from(c == '\n');
                bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
        }
    }
    // Bytes that are not UTF-8 (a binary body) are kept as Latin-1
    // characters and turned back into bytes by the body's reader.
    match String::from_utf8(bytes) {
        Ok(s) => out.push_str(&s),
        Err(e) => out.extend(e.into_bytes().into_iter().map(|b| BYTE_BASE.offset(b))),
    }
    Ok(())
}

/// Non-UTF-8 bytes of a `$'…'` quote ride in a word as characters of a
/// private-use block, one per byte, and come back as bytes in a body.
pub(super) struct ByteBase(u32);
pub(super) const BYTE_BASE: ByteBase = ByteBase(0xF700);

impl ByteBase {
    pub(super) fn offset(&self, b: u8) -> char {
        char::from_u32(self.0 + u32::from(b)).unwrap_or('\u{FFFD}')
    }

    /// A word's bytes: UTF-8, with the private-use stand-ins as their bytes.
    pub(super) fn bytes(&self, s: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(s.len());
        for c in s.chars() {
            match u32::from(c).checked_sub(self.0) {
                Some(b) if b < 256 => out.push(b as u8),
                _ => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        out
    }
}
