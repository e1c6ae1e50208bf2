//! Flags that cannot go together, refused before anything is read or
//! sent: the ways of scheduling (`-mix`, `-har-timing`, `-arrivals`,
//! `-format flow`) with each other and with what they leave no room for.

use barrage_attack::{Arrivals, Rate};

use crate::AttackArgs;

/// Two flags that do not go together, named as typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// `-format flow` with a flag it does not take.
    #[error(
        "-format flow does not take {0}: a flow's sessions send their steps one after another"
    )]
    Flow(&'static str),
    /// `-mix` with a flag it does not take.
    #[error("-mix does not take {0}")]
    Mix(&'static str),
    /// `-har-timing` without `-format har`.
    #[error("-har-timing replays a HAR file's times: it goes with -format har")]
    HarTimingFormat,
    /// `-har-timing` with a flag that sets times of its own.
    #[error("-har-timing sends at the recording's times: it does not take {0}")]
    HarTiming(&'static str),
    /// `-har-speed` alone.
    #[error("-har-speed goes with -har-timing")]
    HarSpeed,
    /// `-rate 0` with nothing to bound it.
    #[error("-rate=0 (or infinity) requires setting -max-workers")]
    Unbounded,
    /// `-start-at` before now.
    #[error("-start-at {at} is in the past (it is {now} now)")]
    StartAtPast {
        /// `-start-at`, RFC 3339.
        at: String,
        /// Now, RFC 3339.
        now: String,
    },
    /// `-http3` with `-unix-socket`.
    #[error("-http3 goes over UDP (QUIC): it does not take -unix-socket")]
    Http3Unix,
    /// `-control` off loopback without a token.
    #[error(
        "-control {0}: an address off loopback needs a token (BARRAGE_TOKEN=T in the environment)"
    )]
    ControlToken(std::net::SocketAddr),
    /// `-control` with `-hold`.
    #[error("-control steers a schedule of requests: it does not go with -hold")]
    ControlHold,
    /// `-hold 0`.
    #[error("-hold must be at least 1")]
    HoldZero,
    /// `-hold` with `-requests`: the opens follow the one schedule (`-rate`
    /// or `-stages`, `-shard`, `-start-at`), `-hold N` is their count.
    #[error("-hold does not take -requests: -hold N is the number of connections opened")]
    HoldRequests,
    /// `-hold-every 0s`.
    #[error("-hold-every must be above 0s (leave it out to only hold the connections)")]
    HoldEveryZero,
    /// `-hold-every` alone.
    #[error("-hold-every goes with -hold")]
    HoldEveryAlone,
    /// `-max-workers 0`.
    #[error("-max-workers must be at least 1")]
    NoWorkers,
    /// URLs as arguments with `-targets` or `-mix` (`flag`).
    #[error("{url}: give URLs or {flag}, not both")]
    UrlsAnd {
        /// The first URL.
        url: String,
        /// `-targets` or `-mix`.
        flag: &'static str,
    },
    /// URLs as arguments with a `-format` other than http.
    #[error("{url}: URLs as arguments are GET targets; -format {format} reads -targets or stdin")]
    UrlsFormat {
        /// The first URL.
        url: String,
        /// The format, as typed.
        format: String,
    },
    /// A `-name` that cannot go in a header.
    #[error("-name {0:?}: the name goes in the X-Barrage-Attack header and cannot hold line breaks or control characters")]
    Name(String),
    /// `-scrape-every` below 100 ms: a scrape a few ms apart would
    /// hammer the endpoint it watches.
    #[error("-scrape-every {0:?} is under 100ms: a scrape that often loads the server it watches")]
    ScrapeEvery(std::time::Duration),
    /// An LLM input flag without what it needs.
    #[error("{0} goes with {1}")]
    Needs(&'static str, &'static str),
    /// `-arrivals poisson` in the closed model.
    #[error("-arrivals poisson (or gamma) spreads requests around a rate: give -rate N or -stages (the closed model, -rate 0, has no arrivals)")]
    PoissonClosed,
}

impl AttackArgs {
    /// What an attack, a sweep and `doctor` refuse alike: where the
    /// targets come from, `-max-workers 0`, a `-name` no header can hold
    /// (a line break there dropped the header silently: issue 29).
    pub fn input_conflicts(&self) -> Result<(), Conflict> {
        if self.max_workers == Some(0) {
            return Err(Conflict::NoWorkers);
        }
        if let Some(url) = self.urls.first() {
            if self.mix.is_some() || !matches!(self.targets.as_str(), "stdin" | "-") {
                return Err(Conflict::UrlsAnd {
                    url: url.clone(),
                    flag: if self.mix.is_some() {
                        "-mix"
                    } else {
                        "-targets"
                    },
                });
            }
            if self.format != barrage_targets::Format::Http {
                return Err(Conflict::UrlsFormat {
                    url: url.clone(),
                    format: format!("{:?}", self.format).to_lowercase(),
                });
            }
        }
        if self.name.chars().any(|c| c.is_control() && c != '\t') {
            return Err(Conflict::Name(barrage_model::words::cut(
                &self.name, 200, false,
            )));
        }
        Ok(())
    }

    /// The first pair of flags that do not go together (or a `-start-at`
    /// already past).
    pub fn conflicts(&self) -> Result<(), Conflict> {
        if self.rate == Rate::Max
            && self.max_workers.is_none()
            && self.stages.is_none()
            && self.hold.is_none()
            && self.mix.is_none()
            && !self.har_timing
        {
            return Err(Conflict::Unbounded);
        }
        if let Some(at) = self.start_at {
            let now = barrage_model::time::now_ns();
            if at < now {
                let rfc = barrage_model::time::format_rfc3339;
                return Err(Conflict::StartAtPast {
                    at: rfc(at),
                    now: rfc(now),
                });
            }
        }
        if self.http3 && self.unix_socket.is_some() {
            return Err(Conflict::Http3Unix);
        }
        if self.control.is_some() && self.hold.is_some() {
            return Err(Conflict::ControlHold);
        }
        if let Some(addr) = self.control.filter(|a| !a.ip().is_loopback()) {
            let token = std::env::var(barrage_collect::live::TOKEN_VAR).unwrap_or_default();
            if token.is_empty() {
                return Err(Conflict::ControlToken(addr));
            }
        }
        let first = |with: &[(bool, &'static str)]| with.iter().find(|(on, _)| *on).map(|w| w.1);
        let poisson = matches!(self.arrivals, Arrivals::Poisson(_) | Arrivals::Gamma(..));
        if self.scrape_every < std::time::Duration::from_millis(100) {
            return Err(Conflict::ScrapeEvery(self.scrape_every));
        }
        let prompts = self.dataset.is_some() || self.prompt_tokens.is_some();
        if self.prefix_tokens > 0 && !prompts {
            return Err(Conflict::Needs(
                "-prefix-tokens",
                "-prompt-tokens or -dataset",
            ));
        }
        if self.dataset_random && self.dataset.is_none() {
            return Err(Conflict::Needs("-dataset-random", "-dataset"));
        }
        let from_rows = self.output_tokens == Some(barrage_targets::OutputTokens::Dataset);
        if from_rows && self.dataset.is_none() {
            return Err(Conflict::Needs("-output-tokens dataset", "-dataset"));
        }
        let llm_input = prompts || self.output_tokens.is_some();
        if self.mix.is_some() {
            if let Some(flag) = first(&[
                (llm_input, "-dataset, -prompt-tokens or -output-tokens"),
                (self.lazy, "-lazy"),
                (self.feed.is_some(), "-feed"),
                (self.hold.is_some(), "-hold"),
                (self.har_timing, "-har-timing"),
                (
                    self.max_workers.is_some(),
                    "-max-workers (give each group its own max-workers)",
                ),
                (
                    self.targets != "stdin",
                    "-targets (each group names its targets)",
                ),
            ]) {
                return Err(Conflict::Mix(flag));
            }
        }
        if self.har_timing {
            if self.format != barrage_targets::Format::Har {
                return Err(Conflict::HarTimingFormat);
            }
            if let Some(flag) = first(&[
                (self.lazy, "-lazy"),
                (self.stages.is_some(), "-stages"),
                (poisson, "-arrivals poisson or gamma"),
                (self.hold.is_some(), "-hold"),
                (self.rate != barrage_model::DEFAULT_RATE, "-rate"),
            ]) {
                return Err(Conflict::HarTiming(flag));
            }
        } else if self.har_speed != 1.0 {
            return Err(Conflict::HarSpeed);
        }
        if poisson && self.rate == Rate::Max && self.stages.is_none() && self.mix.is_none() {
            return Err(Conflict::PoissonClosed);
        }
        if self.hold.is_some() {
            if self.hold == Some(0) {
                return Err(Conflict::HoldZero);
            }
            if self.requests.is_some() {
                return Err(Conflict::HoldRequests);
            }
            if self.hold_every.is_some_and(|d| d.is_zero()) {
                return Err(Conflict::HoldEveryZero);
            }
        } else if self.hold_every.is_some() {
            return Err(Conflict::HoldEveryAlone);
        }
        self.flow_conflicts()
    }

    /// `-format flow` with a flag it does not take.
    pub fn flow_conflicts(&self) -> Result<(), Conflict> {
        if self.format == barrage_targets::Format::Flow {
            let with = [
                (self.mix.is_some(), "-mix"),
                (self.lazy, "-lazy"),
                (self.hold.is_some(), "-hold"),
                (self.har_timing, "-har-timing"),
                (self.pipeline > 1, "-pipeline"),
                (
                    self.dataset.is_some()
                        || self.prompt_tokens.is_some()
                        || self.output_tokens.is_some(),
                    "-dataset, -prompt-tokens or -output-tokens (a step's body says its own)",
                ),
            ];
            if let Some((_, flag)) = with.iter().find(|(on, _)| *on) {
                return Err(Conflict::Flow(flag));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::attack;

    #[test]
    fn each_way_of_scheduling_refuses_what_it_leaves_no_room_for() {
        let cases: [(&[&str], Conflict); 6] = [
            (&["-mix", "m.txt", "-lazy"], Conflict::Mix("-lazy")),
            (&["-har-timing"], Conflict::HarTimingFormat),
            (
                &["-format", "har", "-har-timing", "-rate", "9"],
                Conflict::HarTiming("-rate"),
            ),
            (&["-har-speed", "2"], Conflict::HarSpeed),
            (
                &["-arrivals", "poisson", "-rate", "0", "-max-workers", "2"],
                Conflict::PoissonClosed,
            ),
            (
                &["-format", "flow", "-pipeline", "4"],
                Conflict::Flow("-pipeline"),
            ),
        ];
        for (args, want) in cases {
            assert_eq!(attack(args).conflicts(), Err(want), "{args:?}");
        }
        assert_eq!(attack(&["-rate", "9"]).conflicts(), Ok(()));
        assert_eq!(
            attack(&["-rate", "0"]).conflicts(),
            Err(Conflict::Unbounded)
        );
        assert_eq!(
            attack(&["-hold", "2", "-requests", "3"]).conflicts(),
            Err(Conflict::HoldRequests)
        );
        assert_eq!(
            attack(&["-hold-every", "1s"]).conflicts(),
            Err(Conflict::HoldEveryAlone)
        );
        assert!(matches!(
            attack(&["-targets", "t.txt", "http://h/"]).input_conflicts(),
            Err(Conflict::UrlsAnd {
                flag: "-targets",
                ..
            })
        ));
        assert!(matches!(
            attack(&["-name", "a\nb"]).input_conflicts(),
            Err(Conflict::Name(_))
        ));
    }
}
