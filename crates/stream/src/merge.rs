//! Result inputs opened and merged in timestamp order (a k-way merge, one
//! record in memory per input), for `report`, `dump` and `plot`.

use std::{fs::File, io::Read};

use crate::{Hit, HitReader, StreamError};

/// One opened input.
struct Head {
    name: String,
    reader: HitReader<Box<dyn Read + Send>>,
    hit: Hit,
    live: bool,
}

/// A k-way merge of inputs by timestamp. Read errors end that input and are
/// kept for the caller to print after the report.
pub struct Merge {
    heads: Vec<Head>,
    advance: Option<usize>,
    errors: Vec<(String, StreamError)>,
}

/// Why an input could not be opened: its name and the error, ready to print.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct OpenError {
    /// `name: error`.
    pub message: String,
    /// Whether the input is not a result stream (rather than unreadable).
    pub bad_input: bool,
}

/// Where a merged record came from.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    /// What its input's encoding lacks (vegeta's CSV: scheduled times
    /// and first bytes).
    pub lacks: barrage_model::Lacks,
    /// Its input's name.
    pub name: &'a str,
    /// Its input's place among the inputs given to `open`.
    pub index: usize,
}

impl Merge {
    /// The run's facts of every input read so far (see
    /// [`crate::Decoder::meta`]), each `(key, value)` once, in input order.
    pub fn meta(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = Vec::new();
        for h in &self.heads {
            for kv in h.reader.meta() {
                if !all.contains(kv) {
                    all.push(kv.clone());
                }
            }
        }
        all
    }

    /// The self-audit samples of every input read so far, each with its
    /// input's place among the inputs: a merge keeps them per source.
    pub fn audits(&self) -> Vec<(usize, &barrage_model::Audit)> {
        let each = self.heads.iter().enumerate();
        each.flat_map(|(i, h)| h.reader.audits().iter().map(move |a| (i, a)))
            .collect()
    }

    /// Live control's markers of every input read so far, by time.
    pub fn markers(&self) -> Vec<&barrage_model::Marker> {
        let mut all: Vec<&barrage_model::Marker> = self
            .heads
            .iter()
            .flat_map(|h| h.reader.markers().iter())
            .collect();
        all.sort_by_key(|m| (m.from, m.at));
        all
    }

    /// The markers read since `seen` (how many of each input's were
    /// taken before), which it then counts.
    pub fn markers_since(&self, seen: &mut Vec<usize>) -> Vec<&barrage_model::Marker> {
        self.since(seen, |h| h.reader.markers())
    }

    /// What `of` gives of each input, from the `seen`-th on (which it
    /// then counts).
    fn since<'a, T>(&'a self, seen: &mut Vec<usize>, of: fn(&'a Head) -> &'a [T]) -> Vec<&'a T> {
        seen.resize(self.heads.len(), 0);
        let mut out = Vec::new();
        for (h, n) in self.heads.iter().zip(seen.iter_mut()) {
            let all = of(h);
            out.extend(all.iter().skip(*n));
            *n = all.len();
        }
        out
    }

    /// The scraped server samples of every input read so far.
    pub fn samples(&self) -> Vec<&barrage_model::ServerSample> {
        self.heads
            .iter()
            .flat_map(|h| h.reader.samples().iter())
            .collect()
    }

    /// The scraped samples read since `seen` (how many of each input's
    /// were taken before), which it then counts.
    pub fn samples_since(&self, seen: &mut Vec<usize>) -> Vec<&barrage_model::ServerSample> {
        self.since(seen, |h| h.reader.samples())
    }

    /// Opens `files` (`stdin` or none means standard input).
    pub fn open(files: &[String]) -> Result<Self, OpenError> {
        Self::open_with(files, true)
    }

    /// [`Merge::open`] for readers that need no header lines (`report`,
    /// `plot`): binary streams skip them unallocated.
    pub fn open_without_headers(files: &[String]) -> Result<Self, OpenError> {
        Self::open_with(files, false)
    }

    fn open_with(files: &[String], headers: bool) -> Result<Self, OpenError> {
        let files: Vec<String> = if files.is_empty() {
            vec!["stdin".into()]
        } else {
            files.to_vec()
        };
        let mut heads = Vec::with_capacity(files.len());
        for name in files {
            let input: Box<dyn Read + Send> = if name == "stdin" || name == "-" {
                Box::new(std::io::stdin())
            } else {
                Box::new(File::open(&name).map_err(|e| OpenError {
                    message: format!("{name}: {e}"),
                    bad_input: false,
                })?)
            };
            let mut reader = HitReader::open(input).map_err(|e| OpenError {
                message: format!("{name}: {e}"),
                bad_input: e.is_bad_input(),
            })?;
            if let (HitReader::Binary(d), false) = (&mut reader, headers) {
                d.skip_headers();
            }
            heads.push(Head {
                name,
                reader,
                hit: Hit::default(),
                live: true,
            });
        }
        // An input with no bytes at all is a valid stream of no records
        // (issue 29: `dump | jq 'select(…)' | report` with nothing
        // selected must exit 0); only bytes that are not a stream fail.
        let errors = Vec::new();
        let mut merge = Merge {
            heads,
            advance: None,
            errors,
        };
        for i in 0..merge.heads.len() {
            merge.fill(i);
        }
        // An attack that could not start: its reason, before any output.
        if let Some((name, e)) = merge
            .errors
            .iter()
            .find(|(_, e)| matches!(e, StreamError::Aborted { .. }))
        {
            return Err(OpenError {
                message: format!("{name}: {e}"),
                bad_input: true,
            });
        }
        Ok(merge)
    }

    fn fill(&mut self, i: usize) {
        let h = &mut self.heads[i];
        match h.reader.read(&mut h.hit) {
            Ok(true) => {}
            Ok(false) => h.live = false,
            Err(e) => {
                h.live = false;
                self.errors.push((h.name.clone(), e));
            }
        }
    }

    /// The next record across all inputs, earliest timestamp first.
    pub fn next_hit(&mut self) -> Option<&Hit> {
        self.next_with_source().map(|(hit, _)| hit)
    }

    /// [`Merge::next_hit`], with where the record came from.
    pub fn next_with_source(&mut self) -> Option<(&Hit, Origin<'_>)> {
        if let Some(i) = self.advance.take() {
            self.fill(i);
        }
        let mut best: Option<usize> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if h.live && best.is_none_or(|b| h.hit.timestamp < self.heads[b].hit.timestamp) {
                best = Some(i);
            }
        }
        self.advance = Some(best?);
        self.current()
    }

    /// The record [`Merge::next_with_source`] returned last, again.
    pub fn current(&self) -> Option<(&Hit, Origin<'_>)> {
        let i = self.advance?;
        let h = &self.heads[i];
        let origin = Origin {
            lacks: h.reader.lacks(),
            name: h.name.as_str(),
            index: i,
        };
        Some((&h.hit, origin))
    }

    /// How many inputs are merged.
    pub fn inputs(&self) -> usize {
        self.heads.len()
    }

    /// Errors met while reading, as `name: error`, and whether any is a
    /// bad-input error (exit 2) rather than I/O (exit 1).
    pub fn errors(&self) -> (Vec<String>, bool) {
        let lines = self
            .errors
            .iter()
            .map(|(n, e)| format!("{n}: {e}"))
            .collect();
        let bad = self.errors.iter().any(|(_, e)| e.is_bad_input());
        (lines, bad)
    }
}
