//! Templated requests: `{{seq}}`, `{{shard}}`, `{{rand N}}`,
//! `{{randint A B}}`, `{{uuid}}`, `{{now}}`, `{{now_ms}}` and `-feed`
//! columns (`{{name}}`) in a target's URL, header values and body.
//! Parsed once per target ([`TemplatedTarget::parse`]); rendered per
//! request ([`TemplatedTarget::render`]). Targets without `{{` are never
//! templated: [`has_placeholders`] tells them apart.

use crate::BadValue;
use barrage_model::Target;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(Vec<u8>),
    Seq,
    Shard,
    /// `{{rand N}}`: N random letters and digits.
    Rand(usize),
    /// `{{randint A B}}`: an integer in [A, B].
    RandInt(i64, i64),
    Uuid,
    /// `{{now}}`: unix seconds.
    Now,
    /// `{{now_ms}}`: unix milliseconds.
    NowMs,
    /// A `-feed` column, by index.
    Column(usize),
}

/// A string (or body) with its placeholders parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(Vec<Piece>, bool);

/// What a `-feed` value may not hold as it is in a URL: controls, space,
/// `#` and `"<>\`{}|^` are percent-encoded as a browser encodes a typed
/// URL (`/`, `?`, `&` and `=` stay, so a column can hold a path or a
/// query). A `%` is encoded unless it starts an escape ([`in_url`]).
/// Issue 29: a `#` cut the request while the record claimed the whole
/// URL, and `100%` went out as a bad escape.
const URL_UNSAFE: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'#')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'|')
    .add(b'^');

/// Whether `target` has a placeholder anywhere (`{{`).
pub fn has_placeholders(target: &Target) -> bool {
    let has = |b: &[u8]| b.windows(2).any(|w| w == b"{{");
    has(target.url.as_bytes())
        || target.headers.iter().any(|(_, v)| has(v.as_bytes()))
        || has(&target.body)
}

impl Template {
    /// Parses `text`; `columns` are the `-feed` file's column names.
    pub fn parse(text: &[u8], columns: &[String]) -> Result<Template, BadValue> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(at) = rest.windows(2).position(|w| w == b"{{") {
            if at > 0 {
                pieces.push(Piece::Text(rest[..at].to_vec()));
            }
            let after = &rest[at + 2..];
            let end = after
                .windows(2)
                .position(|w| w == b"}}")
                .ok_or("a {{ without its }}")?;
            let inner = String::from_utf8_lossy(&after[..end]);
            pieces.push(placeholder(inner.trim(), columns)?);
            rest = &after[end + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_vec()));
        }
        Ok(Template(pieces, false))
    }

    /// The most bytes it renders to, `-feed` values aside (a row is at
    /// most the `-feed` file).
    fn most(&self) -> u64 {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.len() as u64,
                Piece::Rand(n) => *n as u64,
                Piece::Uuid => 36,
                Piece::Column(_) => 0,
                // An integer's digits and sign.
                _ => 20,
            })
            .sum()
    }

    /// Whether a `-feed` column is rendered into it.
    fn uses_columns(&self) -> bool {
        self.0.iter().any(|p| matches!(p, Piece::Column(_)))
    }

    /// The highest column rendered into it.
    fn last_column(&self) -> Option<usize> {
        self.0
            .iter()
            .filter_map(|p| match p {
                Piece::Column(i) => Some(*i),
                _ => None,
            })
            .max()
    }

    /// The template of a URL: `-feed` values are percent-encoded where
    /// they hold what a URL cannot.
    fn in_url(mut self) -> Self {
        self.1 = true;
        self
    }

    /// Appends the template rendered in `ctx` to `out`.
    pub fn render(&self, ctx: &mut Context, out: &mut Vec<u8>) {
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.extend_from_slice(t),
                Piece::Seq => out.extend_from_slice(itoa::Buffer::new().format(ctx.seq).as_bytes()),
                Piece::Shard => {
                    out.extend_from_slice(itoa::Buffer::new().format(ctx.shard).as_bytes())
                }
                Piece::Rand(n) => {
                    out.extend((0..*n).map(|_| ctx.rng.alphanumeric() as u8));
                }
                Piece::RandInt(a, b) => {
                    let v = ctx.rng.i64(*a..=*b);
                    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
                }
                Piece::Uuid => {
                    let id = uuid::Builder::from_random_bytes(ctx.rng.u128(..).to_le_bytes())
                        .into_uuid();
                    out.extend_from_slice(
                        id.hyphenated()
                            .encode_lower(&mut uuid::Uuid::encode_buffer())
                            .as_bytes(),
                    );
                }
                Piece::Now | Piece::NowMs => {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap_or_default();
                    let v = if *p == Piece::Now {
                        now.as_secs()
                    } else {
                        now.as_millis() as u64
                    };
                    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
                }
                Piece::Column(i) => match ctx.row.and_then(|r| r.get(*i)) {
                    Some(v) if self.1 => in_url(v, out),
                    Some(v) => out.extend_from_slice(v.as_bytes()),
                    None => {}
                },
            }
        }
    }
}

/// Appends the `-feed` value `v` to a URL: what a URL cannot hold
/// percent-encoded ([`URL_UNSAFE`]), and a `%` that does not start an
/// escape (two hex digits) as `%25`, so that a value already encoded
/// stays as it is. (percent-encoding's sets cannot look ahead: this one
/// rule is written here.)
fn in_url(v: &str, out: &mut Vec<u8>) {
    let b = v.as_bytes();
    let mut from = 0;
    for (i, _) in v.match_indices('%') {
        let escape =
            b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit();
        if !escape {
            for part in percent_encoding::utf8_percent_encode(&v[from..i], URL_UNSAFE) {
                out.extend_from_slice(part.as_bytes());
            }
            out.extend_from_slice(b"%25");
            from = i + 1;
        }
    }
    for part in percent_encoding::utf8_percent_encode(&v[from..], URL_UNSAFE) {
        out.extend_from_slice(part.as_bytes());
    }
}

/// The words inside `{{ }}`.
fn placeholder(inner: &str, columns: &[String]) -> Result<Piece, BadValue> {
    let words: Vec<&str> = inner.split_whitespace().collect();
    let number = |w: Option<&&str>| -> Result<i64, BadValue> {
        w.and_then(|w| w.parse().ok())
            .ok_or_else(|| BadValue(format!("{{{{{inner}}}}}: a number is missing or not whole")))
    };
    Ok(match words.as_slice() {
        ["seq"] => Piece::Seq,
        ["shard"] => Piece::Shard,
        ["uuid"] => Piece::Uuid,
        ["now"] => Piece::Now,
        ["now_ms"] => Piece::NowMs,
        ["rand", ..] if words.len() == 2 => {
            let n = number(words.get(1))?;
            if !(1..=4096).contains(&n) {
                return Err(format!("{{{{{inner}}}}}: N from 1 to 4096").into());
            }
            Piece::Rand(n as usize)
        }
        ["randint", ..] if words.len() == 3 => {
            let (a, b) = (number(words.get(1))?, number(words.get(2))?);
            if a > b {
                return Err(format!("{{{{{inner}}}}}: A must not be above B").into());
            }
            Piece::RandInt(a, b)
        }
        [name] => match columns.iter().position(|c| c == name) {
            Some(i) => Piece::Column(i),
            None if columns.is_empty() => {
                return Err(format!("unknown placeholder {{{{{inner}}}}} (seq, shard, rand N, randint A B, uuid, now, now_ms, or a -feed column)").into())
            }
            None => {
                return Err(format!(
                    "unknown placeholder {{{{{inner}}}}}: not a -feed column ({})",
                    columns.join(", ")
                ).into())
            }
        },
        _ => return Err(format!("unknown placeholder {{{{{inner}}}}}").into()),
    })
}

/// What a request's placeholders are rendered from.
pub struct Context<'a> {
    /// The request's sequence number (of the whole schedule).
    pub seq: u64,
    /// `-shard i/n`'s i (0 without).
    pub shard: u64,
    /// The `-feed` row for this request.
    pub row: Option<&'a [String]>,
    /// Random numbers.
    pub rng: &'a mut fastrand::Rng,
}

/// The most a templated request may render to, URL, headers and body
/// together. Issue 29: a 1 MB body of `{{rand 4096}}` rendered 328 MB
/// for every request.
pub const MAX_RENDERED: u64 = 64 << 20;

/// A target whose URL, header values and body are templates.
#[derive(Debug, Clone)]
pub struct TemplatedTarget {
    method: String,
    url: Template,
    headers: Vec<(String, Template)>,
    body: Template,
    /// Its `:weight`, if given.
    pub(crate) weight: Option<u32>,
    name: String,
}

impl TemplatedTarget {
    /// Parses `target`'s templates against the `-feed` `columns`.
    pub fn parse(target: &Target, columns: &[String]) -> Result<Self, BadValue> {
        let headers = target
            .headers
            .iter()
            .map(|(k, v)| {
                Template::parse(v.as_bytes(), columns)
                    .map(|t| (k.clone(), t))
                    .map_err(|e| format!("header {k}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        let t = TemplatedTarget {
            method: target.method.clone(),
            url: Template::parse(target.url.as_bytes(), columns)
                .map_err(|e| format!("URL: {e}"))?
                .in_url(),
            headers,
            body: Template::parse(&target.body, columns).map_err(|e| format!("body: {e}"))?,
            weight: target.weight,
            name: target.name.clone(),
        };
        let most =
            t.url.most() + t.body.most() + t.headers.iter().map(|(_, h)| h.most()).sum::<u64>();
        if most > MAX_RENDERED {
            return Err(format!(
                "renders up to {} a request, over the limit of {} (use a smaller {{{{rand N}}}} or body)",
                crate::bounded::mib(most),
                crate::bounded::mib(MAX_RENDERED)
            )
            .into());
        }
        Ok(t)
    }

    /// Whether a `-feed` column is rendered into it.
    pub fn uses_columns(&self) -> bool {
        self.url.uses_columns()
            || self.body.uses_columns()
            || self.headers.iter().any(|(_, t)| t.uses_columns())
    }

    /// The highest column rendered into it (a flow's variables come after
    /// the `-feed` file's columns).
    pub fn last_column(&self) -> Option<usize> {
        let headers = self.headers.iter().filter_map(|(_, t)| t.last_column());
        [self.url.last_column(), self.body.last_column()]
            .into_iter()
            .flatten()
            .chain(headers)
            .max()
    }

    /// The target for one request.
    pub fn render(&self, ctx: &mut Context) -> Target {
        let text = |t: &Template, ctx: &mut Context| {
            let mut out = Vec::new();
            t.render(ctx, &mut out);
            String::from_utf8(out)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        };
        let mut body = Vec::new();
        self.body.render(ctx, &mut body);
        Target {
            method: self.method.clone(),
            url: text(&self.url, ctx),
            headers: self
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), text(v, ctx)))
                .collect(),
            body: body.into(),
            weight: self.weight,
            name: self.name.clone(),
            at: None,
            asked: None,
        }
    }
}

/// A `-feed` CSV file: a header line of column names, then rows.
#[derive(Debug, Clone)]
pub struct Feed {
    /// The column names.
    pub columns: Vec<String>,
    /// The rows, each as long as `columns`.
    pub rows: Vec<Vec<String>>,
    /// The line each row starts on.
    pub lines: Vec<u64>,
}

impl Feed {
    /// Reads `text` (the file `name`); errors name its line.
    pub fn parse(text: &[u8], name: &str) -> Result<Feed, BadValue> {
        let mut r = csv::ReaderBuilder::new().from_reader(text);
        let columns: Vec<String> = r
            .headers()
            .map_err(|e| format!("{name}:1: {e}"))?
            .iter()
            .map(|c| c.trim().to_string())
            .collect();
        if columns.iter().any(String::is_empty) {
            return Err(format!("{name}:1: a column without a name").into());
        }
        let mut rows = Vec::new();
        let mut lines = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                format!("{name}:{line}: {e}")
            })?;
            lines.push(rec.position().map_or(0, |p| p.line()));
            rows.push(rec.iter().map(str::to_string).collect());
        }
        if rows.is_empty() {
            return Err(format!("{name}: no rows after the header line").into());
        }
        Ok(Feed {
            columns,
            rows,
            lines,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str, seq: u64, row: Option<&[String]>, columns: &[String]) -> String {
        let t = Template::parse(text.as_bytes(), columns).unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        let mut ctx = Context {
            seq,
            shard: 2,
            row,
            rng: &mut rng,
        };
        let mut out = Vec::new();
        t.render(&mut ctx, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Issue 29: `#` cut the request and `100%` went out as a bad escape.
    #[test]
    fn feed_values_are_encoded_in_urls() {
        let cols = vec!["q".to_string()];
        let url = |v: &str| {
            let t = Template::parse(b"/s?q={{q}}", &cols).unwrap().in_url();
            let mut rng = fastrand::Rng::with_seed(1);
            let row = vec![v.to_string()];
            let mut ctx = Context {
                seq: 0,
                shard: 0,
                row: Some(&row),
                rng: &mut rng,
            };
            let mut out = Vec::new();
            t.render(&mut ctx, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(url("a#b"), "/s?q=a%23b");
        assert_eq!(url("100%"), "/s?q=100%25");
        assert_eq!(url("100%zz"), "/s?q=100%25zz");
        assert_eq!(url("a%2Fb c"), "/s?q=a%2Fb%20c");
        assert_eq!(url("%"), "/s?q=%25");
    }

    #[test]
    fn placeholders_render() {
        assert_eq!(render("/u/{{seq}}/s{{ shard }}", 41, None, &[]), "/u/41/s2");
        let r = render("{{rand 12}}", 0, None, &[]);
        assert!(
            r.len() == 12 && r.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{r}"
        );
        let n: i64 = render("{{randint -3 3}}", 0, None, &[]).parse().unwrap();
        assert!((-3..=3).contains(&n));
        let u = render("{{uuid}}", 0, None, &[]);
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4", "version 4: {u}");
        let now: u64 = render("{{now}}", 0, None, &[]).parse().unwrap();
        let ms: u64 = render("{{now_ms}}", 0, None, &[]).parse().unwrap();
        assert!(now > 1_700_000_000 && ms / 1000 >= now);
        let cols = vec!["user".to_string(), "id".to_string()];
        let row = vec!["ann".to_string(), "7".to_string()];
        assert_eq!(render("{{user}}:{{id}}", 0, Some(&row), &cols), "ann:7");
        assert_eq!(
            render("no placeholders {", 0, None, &[]),
            "no placeholders {"
        );
    }

    #[test]
    fn bad_templates_are_refused() {
        let cols = vec!["user".to_string()];
        for (text, why) in [
            (
                "{{nope}}",
                "unknown placeholder {{nope}}: not a -feed column (user)",
            ),
            ("{{seq", "a {{ without its }}"),
            ("{{rand}}", "unknown placeholder {{rand}}"),
            ("{{rand x}}", "a number is missing"),
            ("{{randint 5 1}}", "A must not be above B"),
        ] {
            let e = Template::parse(text.as_bytes(), &cols).unwrap_err();
            assert!(e.contains(why), "{text}: {e}");
        }
        assert!(Template::parse(b"{{x}}", &[])
            .unwrap_err()
            .contains("or a -feed column"));
    }

    #[test]
    fn feeds_need_a_header_and_rows() {
        let f = Feed::parse(b"user,id\nann,1\nbob,2\n", "f.csv").unwrap();
        assert_eq!((f.columns.len(), f.rows.len()), (2, 2));
        assert!(Feed::parse(b"user,id\n", "f.csv")
            .unwrap_err()
            .contains("no rows"));
        let e = Feed::parse(b"user,id\nann,1\nbob\n", "f.csv").unwrap_err();
        assert!(e.starts_with("f.csv:3: "), "{e}");
    }
}
