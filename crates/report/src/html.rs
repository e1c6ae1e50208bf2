//! HTML pages: `report -type html` (one self-contained page of a run:
//! the summary, the latency spectrum, figures over time, an LLM run's
//! tokens and TTFT, ITL and TPOT, codes, errors,
//! groups, and sections the caller adds, such as a sweep's) and
//! `compare -type html` (two runs' spectra and time series overlaid, and
//! the comparison's table). Every chart is drawn by `barrage_plot::chart`;
//! the pages have no scripts and fetch nothing; their size is bounded by
//! the groups and the time windows kept, never by the records.

mod compare_page;
mod llm;
mod page;
mod report_page;
mod server;
mod timeline;

pub use compare_page::compare_page;
pub use report_page::{Report, Section};
pub use timeline::{Timeline, Window, MOST_WINDOWS};
