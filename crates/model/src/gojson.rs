//! JSON text the way Go's `encoding/json` writes it, so barrage's JSON is
//! byte-compatible with vegeta's: HTML-safe string escapes (`<` as
//! `\u003c`) and Go's float notation (`0`, `39.5`, `1e-7`, `1e+21`).

/// Appends `s` as a JSON string: `"`, `\` and control characters escaped,
/// and `<`, `>`, `&`, U+2028, U+2029 as `\uXXXX`, as Go does.
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let mut plain = 0;
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        let esc: Option<&[u8]> = match c {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            _ => None,
        };
        let unicode = esc.is_none()
            && ((c as u32) < 0x20 || matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}'));
        if esc.is_none() && !unicode {
            continue;
        }
        out.extend_from_slice(&bytes[plain..i]);
        plain = i + c.len_utf8();
        match esc {
            Some(e) => out.extend_from_slice(e),
            None => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
        }
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// Formats a float as Go's JSON encoder does (shortest round-trip digits;
/// exponent form below 1e-6 and from 1e21). Non-finite values become 0,
/// which Go would refuse to encode at all.
pub fn float(f: f64) -> String {
    if !f.is_finite() {
        return "0".into();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        return match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        };
    }
    format!("{f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_like_go() {
        let mut out = Vec::new();
        push_str(&mut out, "a\"b\\c\n<tcp>&\u{1}é");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#""a\"b\\c\n\u003ctcp\u003e\u0026\u0001é""#
        );
    }

    #[test]
    fn floats_format_like_go() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (39.5, "39.5"),
            (0.5, "0.5"),
            (100.3126900025796, "100.3126900025796"),
            (50.150241330015746, "50.150241330015746"),
            (1e-7, "1e-7"),
            (1.5e21, "1.5e+21"),
            (300.0, "300"),
            (f64::NAN, "0"),
        ];
        for (f, want) in cases {
            assert_eq!(float(*f), *want);
        }
    }
}
