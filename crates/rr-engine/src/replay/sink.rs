//! Where protocol events go: the one interface between what makes them (the replay runner,
//! [`super::runner`]; the reader of a child process's lines, [`super::child`]) and what shows or
//! forwards them (the CLI's text printer and JSON line writer, the explorer, a test).
//!
//! The run id belongs to the call, not to the sink: a sink may hear several runs (a kept replay
//! process's reader hands over the runs it serves one after the other, and a reader that has
//! moved on drops the events of runs it no longer waits for). [`Tagged`] stays the wire form:
//! what a JSON line writer writes and a child's reader parses.

use std::sync::Mutex;

use super::protocol::{Event, Tagged};

/// Something that takes protocol events, each with the run it belongs to.
pub trait EventSink {
    /// `event` of run `run`, in the order the events happen.
    fn emit(&self, run: u64, event: Event);
}

impl<S: EventSink + ?Sized> EventSink for &S {
    fn emit(&self, run: u64, event: Event) {
        (**self).emit(run, event)
    }
}

impl<S: EventSink + ?Sized> EventSink for Box<S> {
    fn emit(&self, run: u64, event: Event) {
        (**self).emit(run, event)
    }
}

impl<S: EventSink + ?Sized> EventSink for std::sync::Arc<S> {
    fn emit(&self, run: u64, event: Event) {
        (**self).emit(run, event)
    }
}

/// Each event as its [`Tagged`] line value, into a channel (a reader on another thread).
impl EventSink for crossbeam_channel::Sender<Tagged> {
    fn emit(&self, run: u64, event: Event) {
        // A receiver that has gone wants nothing more.
        let _ = self.send(Tagged { run, event });
    }
}

/// The events of one run into a sink: what the runner holds while it runs a request.
#[derive(Clone, Copy)]
pub struct RunSink<'a> {
    sink: &'a dyn EventSink,
    run: u64,
}

impl<'a> RunSink<'a> {
    pub fn new(sink: &'a dyn EventSink, run: u64) -> RunSink<'a> {
        RunSink { sink, run }
    }

    /// `event`, tagged with this run.
    pub fn emit(&self, event: Event) {
        self.sink.emit(self.run, event)
    }

    pub fn run(&self) -> u64 {
        self.run
    }
}

/// Every event kept, in order, with its run: for tests.
#[derive(Default)]
pub struct Collect {
    events: Mutex<Vec<Tagged>>,
}

impl Collect {
    /// What was emitted so far, taken out.
    pub fn take(&self) -> Vec<Tagged> {
        self.events
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }

    /// The events emitted so far (of any run), taken out.
    pub fn take_events(&self) -> Vec<Event> {
        self.take().into_iter().map(|t| t.event).collect()
    }
}

impl EventSink for Collect {
    fn emit(&self, run: u64, event: Event) {
        if let Ok(mut events) = self.events.lock() {
            events.push(Tagged { run, event });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_sink_tags_every_event_with_its_run() {
        let all = Collect::default();
        let one = RunSink::new(&all, 7);
        one.emit(Event::Done { ok: true });
        RunSink::new(&all, 8).emit(Event::Done { ok: false });
        assert_eq!(
            all.take(),
            vec![
                Tagged {
                    run: 7,
                    event: Event::Done { ok: true }
                },
                Tagged {
                    run: 8,
                    event: Event::Done { ok: false }
                },
            ]
        );
        assert!(all.take().is_empty(), "taken out");
    }

    #[test]
    fn a_channel_hears_tagged_events_and_a_gone_receiver_is_no_error() {
        let (tx, rx) = crossbeam_channel::unbounded();
        tx.emit(3, Event::Done { ok: true });
        assert_eq!(rx.recv().unwrap().run, 3);
        drop(rx);
        tx.emit(4, Event::Done { ok: true });
    }
}
