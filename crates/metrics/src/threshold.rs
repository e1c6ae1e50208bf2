use barrage_model::duration;

use crate::Metrics;

/// A figure a threshold can test.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Figure {
    Success,
    Rate,
    Throughput,
    Requests,
    Errors,
    Mean,
    Max,
    Percentile(f64),
    LagMean,
    LagMax,
    LagPercentile(f64),
    /// `-stream`: the time to the first event (TTFT), a percentile.
    FirstPercentile(f64),
    /// `-stream`: the gap between events (inter-token latency).
    GapPercentile(f64),
    /// `-llm`: a figure of the streams' ([`crate::Llm`]), a percentile:
    /// `ttft`, `ttft_sched`, `itl`, `tpot`, `e2e`, `e2e_sched`.
    Llm(LlmFigure, f64),
    /// `-format flow`: sessions completed of those ended (completed or
    /// failed at a step).
    SessionSuccess,
    /// `-format flow`: a completed session's duration, a percentile.
    SessionPercentile(f64),
    /// The verdict ([`Metrics::trust`]): 1 valid (or nothing to judge),
    /// 0 not valid. Written `valid` alone: the run fails when it is not.
    Valid,
}

/// The LLM figures a threshold names, as `-slo` and the report name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LlmFigure {
    Ttft,
    TtftScheduled,
    Itl,
    Tpot,
    E2e,
    E2eScheduled,
}

impl LlmFigure {
    const ALL: [(&'static str, LlmFigure); 6] = [
        ("ttft_sched.p", LlmFigure::TtftScheduled),
        ("ttft.p", LlmFigure::Ttft),
        ("itl.p", LlmFigure::Itl),
        ("tpot.p", LlmFigure::Tpot),
        ("e2e_sched.p", LlmFigure::E2eScheduled),
        ("e2e.p", LlmFigure::E2e),
    ];

    fn of(self, l: &crate::Llm) -> &crate::Distribution {
        match self {
            LlmFigure::Ttft => l.ttft(),
            LlmFigure::TtftScheduled => l.ttft_scheduled(),
            LlmFigure::Itl => l.itl(),
            LlmFigure::Tpot => l.tpot(),
            LlmFigure::E2e => l.e2e(),
            LlmFigure::E2eScheduled => l.e2e_scheduled(),
        }
    }
}

impl Figure {
    fn is_duration(&self) -> bool {
        matches!(
            self,
            Figure::Mean
                | Figure::Max
                | Figure::Percentile(_)
                | Figure::LagMean
                | Figure::LagMax
                | Figure::LagPercentile(_)
                | Figure::FirstPercentile(_)
                | Figure::GapPercentile(_)
                | Figure::SessionPercentile(_)
                | Figure::Llm(..)
        )
    }

    /// Whether its value is a ratio, written as a percentage.
    fn is_ratio(&self) -> bool {
        matches!(self, Figure::Success | Figure::SessionSuccess)
    }

    fn parse(name: &str) -> Option<Figure> {
        let pct = |p: &str| -> Option<f64> {
            let v: f64 = p.parse().ok()?;
            (v > 0.0 && v <= 100.0).then_some(v / 100.0)
        };
        Some(match name {
            "success" => Figure::Success,
            "rate" => Figure::Rate,
            "throughput" => Figure::Throughput,
            "requests" => Figure::Requests,
            "errors" => Figure::Errors,
            "mean" => Figure::Mean,
            "max" => Figure::Max,
            "lag.mean" => Figure::LagMean,
            "lag.max" => Figure::LagMax,
            "session_success" => Figure::SessionSuccess,
            _ => {
                if let Some(p) = name.strip_prefix("lag.p") {
                    Figure::LagPercentile(pct(p)?)
                } else if let Some(p) = name.strip_prefix("first.p") {
                    Figure::FirstPercentile(pct(p)?)
                } else if let Some(p) = name.strip_prefix("gap.p") {
                    Figure::GapPercentile(pct(p)?)
                } else if let Some((f, p)) = LlmFigure::ALL
                    .iter()
                    .find_map(|(pre, f)| name.strip_prefix(pre).map(|p| (*f, p)))
                {
                    Figure::Llm(f, pct(p)?)
                } else if let Some(p) = name.strip_prefix("session.p") {
                    Figure::SessionPercentile(pct(p)?)
                } else if let Some(p) = name.strip_prefix('p') {
                    Figure::Percentile(pct(p)?)
                } else {
                    return None;
                }
            }
        })
    }

    fn value(&self, m: &Metrics) -> f64 {
        match *self {
            Figure::Success => m.success_ratio(),
            Figure::Rate => m.rate(),
            Figure::Throughput => m.throughput(),
            Figure::Requests => m.requests() as f64,
            Figure::Errors => m.failures() as f64,
            Figure::Mean => m.latency().mean() as f64,
            Figure::Max => m.latency().max() as f64,
            Figure::Percentile(q) => m.latency().quantile(q) as f64,
            Figure::LagMean => m.lag().mean() as f64,
            Figure::LagMax => m.lag().max() as f64,
            Figure::LagPercentile(q) => m.lag().quantile(q) as f64,
            // No events: 0, so that a bound on them holds only once
            // events come.
            Figure::FirstPercentile(q) => m.events().map_or(0.0, |e| e.first().quantile(q) as f64),
            Figure::GapPercentile(q) => m.events().map_or(0.0, |e| e.gap().quantile(q) as f64),
            // No token yet: 0, as for events.
            Figure::Llm(f, q) => m.llm().map_or(0.0, |l| f.of(l).quantile(q) as f64),
            // No session ended: nothing failed.
            Figure::SessionSuccess => m.sessions().map_or(1.0, |x| {
                let ended = x.completed() + x.failed();
                if ended == 0 {
                    1.0
                } else {
                    x.completed() as f64 / ended as f64
                }
            }),
            Figure::SessionPercentile(q) => {
                m.sessions().map_or(0.0, |x| x.took().quantile(q) as f64)
            }
            Figure::Valid => m.trust(&[]).is_none_or(|t| t.valid()) as u8 as f64,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// One `-fail-on` condition, such as `p99>250ms` or `success<99.9%`.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    text: String,
    figure: Figure,
    op: Op,
    value: f64,
}

impl Threshold {
    /// Parses a comma-separated list of conditions. Figures: `success`,
    /// `rate`, `throughput`, `requests`, `errors`, `mean`, `max`, `pNN`,
    /// `lag.mean`, `lag.max`, `lag.pNN`, `first.pNN`, `gap.pNN`, an LLM
    /// stream's `ttft.pNN`, `ttft_sched.pNN`, `itl.pNN`, `tpot.pNN`,
    /// `e2e.pNN`, `e2e_sched.pNN`,
    /// `session_success`, `session.pNN`; operators `<`, `<=`, `>`, `>=`, `==`;
    /// and `valid` alone (the run fails when its verdict is NOT VALID);
    /// durations for latency figures, `NN%` (or a fraction) for `success`.
    pub fn parse_list(text: &str) -> Result<Vec<Threshold>, crate::ParseError> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Threshold::parse)
            .collect()
    }

    /// Parses one condition.
    pub fn parse(text: &str) -> Result<Threshold, crate::ParseError> {
        if text.trim() == "valid" {
            return Ok(Threshold {
                text: "valid".into(),
                figure: Figure::Valid,
                op: Op::Eq,
                value: 0.0,
            });
        }
        let bad = |why: &str| format!("bad -fail-on condition {text:?}: {why}");
        let at = text
            .find(['<', '>', '='])
            .ok_or_else(|| bad("no operator (use <, <=, >, >=, ==)"))?;
        let (name, rest) = text.split_at(at);
        let (op, value) = if let Some(v) = rest.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = rest.strip_prefix("==") {
            (Op::Eq, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Op::Lt, v)
        } else if let Some(v) = rest.strip_prefix('>') {
            (Op::Gt, v)
        } else {
            return Err(crate::ParseError::from(bad("unknown operator")));
        };
        let name = name.trim();
        let value = value.trim();
        let figure = Figure::parse(name).ok_or_else(|| bad(&format!("unknown figure {name:?}")))?;
        let v = if figure.is_duration() {
            let ns = duration::parse(value)
                .map_err(|_| bad("latency figures take a duration such as 250ms"))?;
            ns as f64
        } else if figure.is_ratio() {
            match value.strip_suffix('%') {
                Some(p) => {
                    p.trim()
                        .parse::<f64>()
                        .map_err(|_| bad("not a percentage"))?
                        / 100.0
                }
                None => {
                    let f: f64 = value
                        .parse()
                        .map_err(|_| bad("success takes a percentage such as 99.9%"))?;
                    if f > 1.0 {
                        return Err(crate::ParseError::from(bad(
                            "success takes a percentage such as 99.9% (or a fraction up to 1)",
                        )));
                    }
                    f
                }
            }
        } else {
            value.parse::<f64>().map_err(|_| bad("not a number"))?
        };
        Ok(Threshold {
            text: text.trim().to_string(),
            figure,
            op,
            value: v,
        })
    }

    /// `Some(description)` when the condition holds for `m` (the run fails).
    pub fn check(&self, m: &Metrics) -> Option<String> {
        let actual = self.figure.value(m);
        let holds = match self.op {
            Op::Lt => actual < self.value,
            Op::Le => actual <= self.value,
            Op::Gt => actual > self.value,
            Op::Ge => actual >= self.value,
            Op::Eq => actual == self.value,
        };
        holds.then(|| {
            if self.figure == Figure::Valid {
                let line = m.trust(&[]).map(|t| t.line()).unwrap_or_default();
                return format!("valid (the verdict: {line})");
            }
            let shown = if self.figure.is_duration() {
                duration::format(actual as i64)
            } else if self.figure.is_ratio() {
                format!("{:.2}%", actual * 100.0)
            } else {
                format!("{actual:.2}")
            };
            format!("{} (actual {shown})", self.text)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use barrage_model::Hit;

    fn metrics() -> Metrics {
        let mut m = Metrics::new();
        for i in 0..100u64 {
            let code = if i < 2 { 500 } else { 200 };
            m.add(&Hit {
                timestamp: i as i64 * 10_000_000,
                scheduled: i as i64 * 10_000_000,
                latency: (i + 1) * 1_000_000,
                code,
                ..Hit::default()
            });
        }
        m
    }

    #[test]
    fn valid_fails_a_run_whose_verdict_is_not() {
        let t = Threshold::parse("valid").unwrap();
        assert_eq!(t.check(&metrics()), None);
        let mut late = Metrics::new();
        for i in 0..100u64 {
            late.add(&Hit {
                timestamp: i as i64 * 10_000_000 + 50_000_000,
                scheduled: i as i64 * 10_000_000,
                latency: 1_000_000,
                code: 200,
                ..Hit::default()
            });
        }
        let said = t.check(&late).expect("not valid");
        assert!(
            said.starts_with("valid (the verdict: NOT VALID: the schedule was not kept"),
            "{said}"
        );
        assert!(Threshold::parse_list("p99>1s,valid").unwrap().len() == 2);
    }

    #[test]
    fn conditions_hold_or_not() {
        let m = metrics();
        let cases = [
            ("success<99.9%", true),
            ("success<98%", false),
            ("success<=0.98", true),
            ("p99>250ms", false),
            ("p99>50ms", true),
            ("p99.9>=100ms", true),
            ("max>100ms", false),
            ("mean>50ms", true),
            ("errors>1", true),
            ("errors>=3", false),
            ("rate<50", false),
            ("requests==100", true),
            ("lag.p99>5ms", false),
        ];
        for (text, holds) in cases {
            let t = Threshold::parse(text).unwrap();
            assert_eq!(t.check(&m).is_some(), holds, "{text}");
        }
        let msg = Threshold::parse("p99>50ms").unwrap().check(&m).unwrap();
        assert!(msg.starts_with("p99>50ms (actual 99."), "{msg}");
        // No session: none failed.
        assert!(Threshold::parse("session_success<99%")
            .unwrap()
            .check(&m)
            .is_none());
    }

    #[test]
    fn session_figures_are_over_ended_sessions() {
        use barrage_model::{SessionEnd, SessionMark};
        let mut m = Metrics::new();
        for id in 0..10u64 {
            let end = match id {
                0 => SessionEnd::Failed,
                1 => SessionEnd::Going,
                _ => SessionEnd::Completed,
            };
            m.add(&Hit {
                code: 200,
                session: Some(SessionMark {
                    id,
                    step: 0,
                    end,
                    took: (id + 1) * 1_000_000,
                }),
                ..Hit::default()
            });
        }
        // 8 completed of 9 ended: 88.89%.
        let msg = Threshold::parse("session_success<99%")
            .unwrap()
            .check(&m)
            .unwrap();
        assert_eq!(msg, "session_success<99% (actual 88.89%)");
        assert!(Threshold::parse("session_success<0.8")
            .unwrap()
            .check(&m)
            .is_none());
        assert!(Threshold::parse("session.p50>4ms")
            .unwrap()
            .check(&m)
            .is_some());
        assert!(Threshold::parse("session.p50>9ms")
            .unwrap()
            .check(&m)
            .is_none());
    }

    #[test]
    fn lists_and_errors() {
        assert_eq!(
            Threshold::parse_list("success<99.9%, p99>250ms,lag.p99>5ms")
                .unwrap()
                .len(),
            3
        );
        for bad in [
            "p99",
            "p99>abc",
            "latency>5ms",
            "success<150",
            "p0>1ms",
            "p101>1ms",
            "rate<fast",
            "p99=>1ms",
        ] {
            assert!(Threshold::parse(bad).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod llm_tests {
    use super::*;
    use barrage_model::{Hit, Tokens};

    /// Issue 62: `-fail-on` and `-stop-on` take the LLM figures by the
    /// names `-slo` and the report give them.
    #[test]
    fn llm_figures_are_thresholds() {
        let mut m = Metrics::new();
        for i in 0..10u64 {
            m.add(&Hit {
                code: 200,
                timestamp: 1_000_000 * i as i64 + 5_000_000,
                scheduled: 1_000_000 * i as i64,
                latency: 1_000_000_000,
                events: (0..11).map(|k| 150_000_000 + k * 15_000_000).collect(),
                event_count: 11,
                tokens: Some(Tokens {
                    output: Some(11),
                    chunks: 11,
                    ..Tokens::default()
                }),
                ..Hit::default()
            });
        }
        let holds = |t: &str| Threshold::parse(t).unwrap().check(&m).is_some();
        assert!(holds("ttft.p99>140ms") && !holds("ttft.p99>160ms"));
        assert!(holds("ttft_sched.p50>=155ms"), "5 ms late");
        assert!(holds("itl.p50==15ms"));
        // (1 s − 150 ms) / 10 tokens.
        assert!(holds("tpot.p50>84ms") && !holds("tpot.p50>86ms"));
        assert!(holds("e2e.p99>=1s") && holds("e2e_sched.p99>1s"));
        assert!(Threshold::parse("ttft.p0>1ms").is_err());
    }
}
