//! Repeated warnings, limited: a client that can make the server warn can
//! otherwise fill its logs (a rapid-reset attacker draws one warning per
//! connection from the HTTP/2 library, thousands a second). Each call site
//! may write [`BURST`] warning or error lines per [`WINDOW`]; the rest are
//! dropped and counted in `sudoku_log_lines_suppressed_total`, labelled by
//! the call site's target, so the flood stays visible in the metrics.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tracing::callsite::Identifier;
use tracing::{Level, Metadata};
use tracing_subscriber::layer::{Context, Filter};

/// Lines one call site may write per [`WINDOW`].
pub const BURST: u32 = 10;
/// The window [`BURST`] applies to.
pub const WINDOW: Duration = Duration::from_secs(10);

/// A per-layer filter that lets through at most [`BURST`] warnings or
/// errors per call site per [`WINDOW`]; other levels pass untouched.
#[derive(Default)]
pub struct RepeatLimit {
    sites: Mutex<HashMap<Identifier, Site>>,
}

/// One call site's current window.
struct Site {
    opened: Instant,
    written: u32,
    /// Its suppressed-lines counter, registered at the first suppression.
    suppressed: Option<metrics::Counter>,
}

impl RepeatLimit {
    /// Whether a line from the call site `id` (of `target`) may be written
    /// at `now`; one that may not is counted.
    fn admit(&self, id: Identifier, target: &str, now: Instant) -> bool {
        let mut sites = self.sites.lock().unwrap_or_else(|e| e.into_inner());
        let site = sites.entry(id).or_insert(Site {
            opened: now,
            written: 0,
            suppressed: None,
        });
        if now.duration_since(site.opened) >= WINDOW {
            site.opened = now;
            site.written = 0;
        }
        site.written = site.written.saturating_add(1);
        if site.written <= BURST {
            return true;
        }
        site.suppressed
            .get_or_insert_with(|| {
                metrics::counter!(
                    "sudoku_log_lines_suppressed_total",
                    "target" => target.to_owned()
                )
            })
            .increment(1);
        false
    }
}

impl<S> Filter<S> for RepeatLimit {
    fn enabled(&self, meta: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        // WARN and ERROR are the levels at or below WARN in tracing's order.
        if !meta.is_event() || *meta.level() > Level::WARN {
            return true;
        }
        self.admit(meta.callsite(), meta.target(), Instant::now())
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        if meta.is_event() && *meta.level() <= Level::WARN {
            // Asked each time: the answer changes with the window.
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::always()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Site;
    static SITE: Site = Site;
    impl tracing::callsite::Callsite for Site {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &Metadata<'_> {
            unreachable!("not registered")
        }
    }
    struct Other;
    static OTHER: Other = Other;
    impl tracing::callsite::Callsite for Other {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &Metadata<'_> {
            unreachable!("not registered")
        }
    }

    #[test]
    fn a_site_writes_a_burst_per_window_and_others_are_unaffected() {
        let limit = RepeatLimit::default();
        let start = Instant::now();
        let id = || Identifier(&SITE);
        let admitted = (0..100).filter(|_| limit.admit(id(), "t", start)).count();
        assert_eq!(admitted, BURST as usize);
        assert!(
            limit.admit(Identifier(&OTHER), "t", start),
            "another site has its own window"
        );
        assert!(!limit.admit(id(), "t", start + WINDOW / 2));
        assert!(limit.admit(id(), "t", start + WINDOW), "a new window opens");
    }
}
