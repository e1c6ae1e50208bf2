//! [`Server`]: a scraped server's metrics (`attack -scrape`), series by
//! series on the run's time axis, for the reports to set beside the
//! load's own figures.

use std::collections::BTreeMap;

use barrage_model::ServerSample;

/// The most points a series keeps for the charts and JSON (its summary
/// counts every sample): past it, every other point is dropped and the
/// stride doubles.
pub const MAX_POINTS: usize = 4096;

/// One series: its samples' summary and points.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// The endpoint.
    pub source: String,
    /// Its name with its labels.
    pub name: String,
    /// Whether its values are a counter's rate a second.
    pub rate: bool,
    /// Samples read.
    pub count: u64,
    /// Least, greatest, sum and last value.
    pub min: f64,
    /// Greatest value.
    pub max: f64,
    sum: f64,
    /// The last value read.
    pub last: f64,
    /// (unix ns, value), thinned to at most [`MAX_POINTS`].
    pub points: Vec<(i64, f64)>,
    stride: u64,
}

impl Series {
    /// Whether it is the scrape's own (`up`, `scrape_duration_seconds`),
    /// not the server's: tables list it, charts and windows leave it out.
    pub fn is_scrape_own(&self) -> bool {
        matches!(self.name.as_str(), "up" | "scrape_duration_seconds")
    }

    /// The mean of its values.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    fn add(&mut self, at: i64, v: f64) {
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        }
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v;
        self.last = v;
        if self.count.is_multiple_of(self.stride.max(1)) {
            self.points.push((at, v));
            if self.points.len() > MAX_POINTS {
                let kept: Vec<(i64, f64)> = self.points.iter().copied().step_by(2).collect();
                self.points = kept;
                self.stride = self.stride.max(1) * 2;
            }
        }
        self.count += 1;
    }
}

/// Every scraped series of a run, by endpoint and name.
#[derive(Debug, Clone, Default)]
pub struct Server {
    series: BTreeMap<(String, String), Series>,
}

impl Server {
    /// Adds the samples, in the order read.
    pub fn add<'a>(&mut self, samples: impl IntoIterator<Item = &'a ServerSample>) {
        for s in samples {
            if !s.value.is_finite() {
                continue;
            }
            let key = (s.source.clone(), s.name.clone());
            let series = self.series.entry(key).or_insert_with(|| Series {
                source: s.source.clone(),
                name: s.name.clone(),
                rate: s.rate,
                stride: 1,
                ..Series::default()
            });
            series.add(s.at, s.value);
        }
    }

    /// Its series, by endpoint and name.
    pub fn series(&self) -> impl Iterator<Item = &Series> {
        self.series.values()
    }

    /// Whether no sample came.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// Whether several endpoints were scraped (their names then say
    /// which).
    pub fn sources(&self) -> usize {
        let mut s: Vec<&str> = self.series.keys().map(|(s, _)| s.as_str()).collect();
        s.dedup();
        s.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_summarise_and_thin_their_points() {
        let mut server = Server::default();
        let samples: Vec<ServerSample> = (0..10_000)
            .map(|i| ServerSample {
                source: "http://m/metrics".into(),
                at: i * 1_000_000_000,
                name: "waiting".into(),
                value: (i % 10) as f64,
                rate: false,
            })
            .collect();
        server.add(&samples);
        let s = server.series().next().unwrap();
        assert_eq!((s.count, s.min, s.max, s.last), (10_000, 0.0, 9.0, 9.0));
        assert!((s.mean() - 4.5).abs() < 1e-9);
        assert!(s.points.len() <= MAX_POINTS && s.points.len() > MAX_POINTS / 4);
        assert_eq!(s.points[0], (0, 0.0));
        assert!(s.points.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
