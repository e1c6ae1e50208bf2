//! `-format flow`: one session's steps, sent in order, each written as an
//! http-format target with its own directives:
//!
//! ```text
//! POST http://127.0.0.1:8080/login
//! Content-Type: application/json
//! @login.json
//! :name login                        the step's name (default: its number)
//! :check status=200                  a -check, for this step (repeatable)
//! :extract token json:.access_token  into {{token}} for later steps
//! :think 100ms..300ms                the wait after its answer
//!
//! GET http://127.0.0.1:8080/me
//! Authorization: Bearer {{token}}
//! ```
//!
//! A variable is a template column after the `-feed` file's: a step's
//! templates are parsed against the columns that earlier steps set, so a
//! variable no earlier step sets is refused at its line, before anything
//! is sent. The extraction expressions and checks are kept as typed, with
//! their lines, for the client to compile (it owns the JSON paths and the
//! check grammar).

use std::{io::BufRead, time::Duration};

use barrage_model::Target;

use crate::{error::error, http::Directive, Defaults, HttpTargets, TargetError, TemplatedTarget};

/// Most steps in a flow (a record names its step by number).
pub const MAX_STEPS: usize = 1000;

/// The placeholders of the template engine's own, which no variable may
/// shadow.
const BUILT_IN: [&str; 7] = ["seq", "shard", "rand", "randint", "uuid", "now", "now_ms"];

/// How long a session waits after a step's answer (`:think`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Think {
    /// No wait.
    None,
    /// `200ms`.
    Fixed(Duration),
    /// `100ms..300ms`: uniform between the two.
    Uniform(Duration, Duration),
    /// `exp:200ms`: exponential with this mean (drawn waits are capped at
    /// [`Think::EXP_CAP`] means, so that one draw cannot hold a session
    /// for ever; the mean moves by e^-20 of itself).
    Exp(Duration),
}

impl Think {
    /// The longest exponential wait, in means.
    pub const EXP_CAP: f64 = 20.0;

    /// Reads `200ms`, `100ms..300ms` or `exp:200ms`.
    pub fn parse(text: &str) -> Result<Think, BadThink> {
        let one = |t: &str| -> Result<Duration, BadThink> {
            match barrage_model::duration::parse(t.trim()) {
                Ok(ns) if ns >= 0 => Ok(Duration::from_nanos(ns as u64)),
                _ => Err(BadThink::Form(text.to_string())),
            }
        };
        if let Some(mean) = text.strip_prefix("exp:") {
            let mean = one(mean)?;
            return Ok(if mean.is_zero() {
                Think::None
            } else {
                Think::Exp(mean)
            });
        }
        if let Some((low, high)) = text.split_once("..") {
            let (low, high) = (one(low)?, one(high)?);
            if low > high {
                return Err(BadThink::Backwards(text.to_string()));
            }
            return Ok(if high.is_zero() {
                Think::None
            } else {
                Think::Uniform(low, high)
            });
        }
        let d = one(text)?;
        Ok(if d.is_zero() {
            Think::None
        } else {
            Think::Fixed(d)
        })
    }

    /// One wait, drawn with `rng`.
    pub fn draw(&self, rng: &mut fastrand::Rng) -> Duration {
        match *self {
            Think::None => Duration::ZERO,
            Think::Fixed(d) => d,
            Think::Uniform(low, high) => {
                let span = (high - low).as_nanos() as u64;
                low + Duration::from_nanos(rng.u64(0..=span))
            }
            Think::Exp(mean) => {
                // 1 - f64() is in (0, 1]: its logarithm is finite.
                let means = (-(1.0 - rng.f64()).ln()).min(Self::EXP_CAP);
                mean.mul_f64(means)
            }
        }
    }
}

/// An `:extract VAR EXPR` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extraction {
    /// Where it is.
    pub line: u64,
    /// The variable's name.
    pub var: String,
    /// Its template column (after the `-feed` columns).
    pub column: usize,
    /// The expression as typed: `json:.path`, `header:Name`,
    /// `cookie:Name`, `body~REGEX` or `status`.
    pub expr: String,
}

/// A `:check` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepCheck {
    /// Where it is.
    pub line: u64,
    /// The condition as typed (the `-check` grammar).
    pub text: String,
}

/// One step of a flow.
#[derive(Debug, Clone)]
pub struct FlowStep {
    /// Its `:name`, or its number from 1.
    pub name: String,
    /// The line its request line is on.
    pub line: u64,
    /// The request as written.
    pub target: Target,
    /// Its templates, against the `-feed` columns and the variables
    /// earlier steps set.
    pub template: TemplatedTarget,
    /// Its `:check` lines.
    pub checks: Vec<StepCheck>,
    /// Its `:extract` lines, in order.
    pub extractions: Vec<Extraction>,
    /// Its `:think`.
    pub think: Think,
}

/// A flow file's steps.
#[derive(Debug, Clone)]
pub struct Flow {
    /// The file's name, for errors.
    pub source: String,
    /// The steps, in order.
    pub steps: Vec<FlowStep>,
    /// The template columns: the `-feed` file's, then each variable in the
    /// order of its first `:extract`.
    pub columns: Vec<String>,
}

impl Flow {
    /// Reads a flow from `input` (called `source` in errors); `feed`: the
    /// `-feed` file's column names.
    pub fn read(
        input: impl BufRead,
        source: &str,
        defaults: Defaults,
        feed: &[String],
    ) -> Result<Flow, TargetError> {
        Self::from_targets(HttpTargets::flow(input, source, defaults), feed)
    }

    /// Reads a flow from a flow's reader ([`HttpTargets::flow`]).
    pub fn from_targets<R: BufRead>(
        mut reader: HttpTargets<R>,
        feed: &[String],
    ) -> Result<Flow, TargetError> {
        let source = reader.source().to_string();
        let source = source.as_str();
        let mut columns = feed.to_vec();
        let mut steps: Vec<FlowStep> = Vec::new();
        while let Some(mut target) = reader.next()? {
            let line = reader.start_line();
            let at = |l: u64, m: String| error(source, l, m);
            if steps.len() == MAX_STEPS {
                return Err(at(line, format!("a flow has at most {MAX_STEPS} steps")));
            }
            let name = if target.name.is_empty() {
                (steps.len() + 1).to_string()
            } else {
                target.name.clone()
            };
            if let Some(same) = steps.iter().find(|s| s.name == name) {
                return Err(at(
                    line,
                    format!(
                        "a second step named {name} (the first is at line {})",
                        same.line
                    ),
                ));
            }
            target.name = name.clone();
            // Its templates see only what earlier steps set.
            let template = TemplatedTarget::parse(&target, &columns).map_err(|e| {
                let e =
                    e.0.replace("not a -feed column", "no -feed column or earlier :extract")
                        .replace("or a -feed column", "a -feed column or an earlier :extract");
                at(line, format!("step {name}: {e}"))
            })?;
            let (mut checks, mut extractions, mut think) = (Vec::new(), Vec::new(), None);
            for Directive { line, word, value } in reader.take_directives() {
                match word.as_str() {
                    "check" if value.is_empty() => {
                        return Err(at(
                            line,
                            ":check needs a condition (:check status=200)".into(),
                        ))
                    }
                    "check" => checks.push(StepCheck { line, text: value }),
                    "think" if think.is_some() => {
                        return Err(at(line, "a second :think for one step".into()))
                    }
                    "think" => {
                        think = Some(Think::parse(&value).map_err(|e| at(line, e.to_string()))?)
                    }
                    _ => {
                        let (var, expr) =
                            extraction(&value, feed).map_err(|e| at(line, e.to_string()))?;
                        let column = match columns.iter().position(|c| *c == var) {
                            Some(i) => i,
                            None => {
                                columns.push(var.clone());
                                columns.len() - 1
                            }
                        };
                        extractions.push(Extraction {
                            line,
                            var,
                            column,
                            expr,
                        });
                    }
                }
            }
            steps.push(FlowStep {
                name,
                line,
                target,
                template,
                checks,
                extractions,
                think: think.unwrap_or(Think::None),
            });
        }
        if steps.is_empty() {
            return Err(error(
                source,
                1,
                "a flow needs at least one step (a request line such as GET http://127.0.0.1:8080/)"
                    .into(),
            ));
        }
        Ok(Flow {
            source: source.to_string(),
            steps,
            columns,
        })
    }

    /// Whether any step's templates use a column (a `-feed` row or a
    /// variable): its requests are rendered per session.
    pub fn templated(&self) -> bool {
        self.steps
            .iter()
            .any(|s| crate::has_placeholders(&s.target))
    }
}

/// A `:think` that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadThink {
    /// Not a duration, a range or `exp:`.
    #[error("bad :think {0:?} (use 200ms, 100ms..300ms or exp:200ms)")]
    Form(String),
    /// `300ms..100ms`.
    #[error(":think {0}: the low end is above the high end")]
    Backwards(String),
}

/// An `:extract` line that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadExtraction {
    #[error(
        ":extract {0}: use :extract VAR json:.path, header:Name, cookie:Name, body~REGEX, status or answer"
    )]
    Form(String),
    #[error(":extract {0}: a variable's name is letters, digits, _ and -, from a letter or _")]
    Name(String),
    #[error(":extract {0}: {{{{{0}}}}} is the template engine's own")]
    BuiltIn(String),
    #[error(":extract {0}: {0} is a -feed column")]
    Feed(String),
}

/// `VAR EXPR` of an `:extract` line, checked for form: a name that is no
/// placeholder of the engine's nor a `-feed` column, and an expression of
/// a known kind (the client compiles it).
fn extraction(value: &str, feed: &[String]) -> Result<(String, String), BadExtraction> {
    let Some((var, expr)) = value.split_once(char::is_whitespace) else {
        return Err(BadExtraction::Form(format!("{value:?}")));
    };
    let expr = expr.trim();
    let named = var
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && var
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !named {
        return Err(BadExtraction::Name(var.to_string()));
    }
    if BUILT_IN.contains(&var) {
        return Err(BadExtraction::BuiltIn(var.to_string()));
    }
    if feed.iter().any(|c| c == var) {
        return Err(BadExtraction::Feed(var.to_string()));
    }
    let kind = ["json:.", "header:", "cookie:", "body~"]
        .iter()
        .find(|k| expr.starts_with(**k));
    match kind {
        Some(k) if expr.len() > k.len() || *k == "json:." => {}
        None if expr == "status" || expr == "answer" => {}
        _ => return Err(BadExtraction::Form(format!("{var} {expr}"))),
    }
    Ok((var.to_string(), expr.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Flow, TargetError> {
        Flow::read(
            text.as_bytes(),
            "f.flow",
            Defaults::default(),
            &["user".into()],
        )
    }

    #[test]
    fn steps_carry_names_checks_extractions_and_think() {
        let f = read(
            "POST http://a:1/login\nContent-Type: application/json\n:name login\n:check status=200\n:extract token json:.access_token\n:extract sid cookie:sid\n:think 100ms..300ms\n\nGET http://a:1/me?u={{user}}\nAuthorization: Bearer {{token}}\n:check status=200\n:check body~ok\n:extract id body~\"id\":(\\d+)\n\nGET http://a:1/items/{{id}}\n:think exp:50ms\n",
        )
        .unwrap();
        assert_eq!(f.columns, ["user", "token", "sid", "id"]);
        let names: Vec<&str> = f.steps.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["login", "2", "3"]);
        let s = &f.steps[0];
        assert_eq!((s.line, s.target.name.as_str()), (1, "login"));
        assert_eq!(
            s.checks,
            [StepCheck {
                line: 4,
                text: "status=200".into()
            }]
        );
        assert_eq!(s.extractions[0].expr, "json:.access_token");
        assert_eq!((s.extractions[1].line, s.extractions[1].column), (6, 2));
        assert_eq!(
            s.think,
            Think::Uniform(Duration::from_millis(100), Duration::from_millis(300))
        );
        assert_eq!(f.steps[1].line, 9);
        assert_eq!(f.steps[1].checks.len(), 2);
        assert_eq!(f.steps[1].think, Think::None);
        assert_eq!(f.steps[2].think, Think::Exp(Duration::from_millis(50)));
        assert!(f.templated());
    }

    #[test]
    fn a_variable_set_again_keeps_its_column() {
        let f = read(
            "GET http://a:1/\n:extract t header:X-Token\nGET http://a:1/{{t}}\n:extract t status\n",
        )
        .unwrap();
        assert_eq!(f.columns, ["user", "t"]);
        assert_eq!(f.steps[1].extractions[0].column, 1);
    }

    #[test]
    fn refusals_name_the_line() {
        let cases: &[(&str, u64, &str)] = &[
            ("", 1, "a flow needs at least one step"),
            ("# only\n", 1, "a flow needs at least one step"),
            (
                "GET http://a:1/{{token}}\n\nGET http://a:1/\n:extract token status\n",
                1,
                "step 1: URL: unknown placeholder {{token}}: no -feed column or earlier :extract (user)",
            ),
            (
                "GET http://a:1/\nX: {{me}}\n:extract me status\n",
                1,
                "step 1: header X: unknown placeholder {{me}}",
            ),
            ("GET http://a:1/\n:extract token\n", 2, ":extract \"token\": use"),
            ("GET http://a:1/\n:extract token xml:/a\n", 2, ":extract token xml:/a: use"),
            ("GET http://a:1/\n:extract token header:\n", 2, ":extract token header:: use"),
            ("GET http://a:1/\n:extract 1x status\n", 2, ":extract 1x: a variable's name"),
            ("GET http://a:1/\n:extract seq status\n", 2, ":extract seq: {{seq}} is the template"),
            ("GET http://a:1/\n:extract user status\n", 2, ":extract user: user is a -feed column"),
            ("GET http://a:1/\n:think soon\n", 2, "bad :think \"soon\""),
            ("GET http://a:1/\n:think 3s..1s\n", 2, ":think 3s..1s: the low end is above"),
            ("GET http://a:1/\n:think 1s\n:think 2s\n", 3, "a second :think"),
            ("GET http://a:1/\n:check\n", 2, ":check needs a condition"),
            ("GET http://a:1/\n:weight 2\n", 2, "a flow's step has no :weight"),
            ("GET http://a:1/\n:pause 2s\n", 2, "unknown directive :pause (a flow's step takes"),
            (
                "GET http://a:1/\n:name a\n\nGET http://a:1/\n:name a\n",
                4,
                "a second step named a (the first is at line 1)",
            ),
        ];
        for (text, line, msg) in cases {
            let e = read(text).unwrap_err();
            assert_eq!(e.line, *line, "{text:?}: {e}");
            assert!(e.message.starts_with(msg), "{text:?}: {e}");
            assert!(
                e.to_string().starts_with(&format!("f.flow:{line}: ")),
                "{e}"
            );
        }
    }

    #[test]
    fn think_draws_follow_their_distribution() {
        let mut rng = fastrand::Rng::with_seed(7);
        let n = 20_000;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let fixed = Think::parse("200ms").unwrap();
        assert_eq!(fixed.draw(&mut rng), Duration::from_millis(200));
        let uniform = Think::parse("100ms..300ms").unwrap();
        let draws: Vec<f64> = (0..n).map(|_| ms(uniform.draw(&mut rng))).collect();
        assert!(draws.iter().all(|d| (100.0..=300.0).contains(d)));
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean - 200.0).abs() < 2.0, "{mean}");
        let below = draws.iter().filter(|d| **d < 150.0).count() as f64 / n as f64;
        assert!((below - 0.25).abs() < 0.02, "{below}");
        let exp = Think::parse("exp:200ms").unwrap();
        let draws: Vec<f64> = (0..n).map(|_| ms(exp.draw(&mut rng))).collect();
        let mean = draws.iter().sum::<f64>() / n as f64;
        assert!((mean - 200.0).abs() < 8.0, "{mean}");
        // P(X > mean) = 1/e for an exponential.
        let over = draws.iter().filter(|d| **d > 200.0).count() as f64 / n as f64;
        assert!((over - (-1f64).exp()).abs() < 0.02, "{over}");
        assert!(draws.iter().all(|d| *d <= 200.0 * Think::EXP_CAP));
        assert_eq!(Think::parse("0").unwrap(), Think::None);
        assert_eq!(Think::parse("exp:0s").unwrap(), Think::None);
    }
}
