//! Progress of an export or import on stderr: a line redrawn in place on a terminal,
//! otherwise one line per [`LOG_EVERY`] entities (so a log file stays short); and
//! the summary at the end.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Entities between two progress lines when stderr is not a terminal.
pub(crate) const LOG_EVERY: u64 = 100_000;
/// How often a terminal's line is redrawn.
const REDRAW: Duration = Duration::from_millis(200);

pub(crate) struct Progress {
    verb: &'static str,
    tty: bool,
    started: Instant,
    drawn: Instant,
    pub tables: u64,
    pub entities: u64,
    table: String,
}

impl Progress {
    pub(crate) fn new(verb: &'static str) -> Progress {
        let now = Instant::now();
        Progress {
            verb,
            tty: std::io::stderr().is_terminal(),
            started: now,
            drawn: now,
            tables: 0,
            entities: 0,
            table: String::new(),
        }
    }

    /// A table begins.
    pub(crate) fn table(&mut self, name: &str) {
        self.tables += 1;
        self.table = name.to_owned();
    }

    /// `n` more entities done.
    pub(crate) fn add(&mut self, n: u64) {
        let before = self.entities;
        self.entities += n;
        if self.tty {
            if self.drawn.elapsed() >= REDRAW {
                self.drawn = Instant::now();
                let mut err = std::io::stderr().lock();
                // ok to ignore: progress is best effort
                let _ = write!(err, "\r\x1b[K{} {}: {} entities", self.verb, self.table, self.entities);
                let _ = err.flush();
            }
        } else if before / LOG_EVERY != self.entities / LOG_EVERY {
            eprintln!("{} {}: {} entities so far", self.verb, self.table, self.entities);
        }
    }

    /// The summary line: `exported 3 tables, 12000 entities in 1.2 s`.
    pub(crate) fn summary(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64();
        let rate = if secs > 0.0 { self.entities as f64 / secs } else { 0.0 };
        format!(
            "{} {} table{}, {} entit{} in {secs:.1} s ({rate:.0} entities/s)",
            self.verb,
            self.tables,
            if self.tables == 1 { "" } else { "s" },
            self.entities,
            if self.entities == 1 { "y" } else { "ies" },
        )
    }

    /// Clears the terminal's progress line and prints the summary.
    pub(crate) fn finish(&self) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        eprintln!("aztable: {}", self.summary());
    }
}
