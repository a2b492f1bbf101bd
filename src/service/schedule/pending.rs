//! What a queued task and the caller that waits for it share: the
//! deadline, where the answer goes, whether the task is still wanted, and
//! the caller's side of the wait.

use std::time::Instant;

use tokio::sync::oneshot;

use crate::service::status::Failure;

/// Where a queued task's answer goes: a channel to the task that waits
/// for it, or (for a part of a batch message) the message's joint.
pub(super) trait ReplyTo {
    type Answer;

    /// Nobody waits for the answer any more.
    fn is_closed(&self) -> bool;

    fn send(self, answer: Self::Answer);
}

impl<T> ReplyTo for oneshot::Sender<T> {
    type Answer = T;

    fn is_closed(&self) -> bool {
        oneshot::Sender::is_closed(self)
    }

    fn send(self, answer: T) {
        // A failed send: the caller left, and the answer has nobody to go to.
        let _ = oneshot::Sender::send(self, answer);
    }
}

/// What every queued task shares: when its caller stops waiting for it
/// and where its answer goes. The task is wanted until the deadline
/// passes or it is cancelled: its caller left (the client reset the call
/// or ended the stream), or it answered already.
pub(super) struct Pending<R> {
    deadline: Option<Instant>,
    /// Taken when the answer is sent.
    reply: Option<R>,
}

impl<R: ReplyTo> Pending<R> {
    pub(super) fn new(deadline: Option<Instant>, reply: R) -> Pending<R> {
        Pending {
            deadline,
            reply: Some(reply),
        }
    }

    pub(super) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Nobody waits for the answer any more: the work is to stop.
    pub(super) fn cancelled(&self) -> bool {
        self.reply.as_ref().is_none_or(R::is_closed)
    }

    /// The task is worth running: its deadline has not passed and it is
    /// not cancelled. Every task's [`Work::wanted`].
    ///
    /// [`Work::wanted`]: crate::service::pool::Work::wanted
    pub(super) fn wanted(&self) -> bool {
        !past(self.deadline) && !self.cancelled()
    }

    /// Sends `answer` to the caller, if it is still there; once.
    pub(super) fn answer(&mut self, answer: R::Answer) {
        if let Some(reply) = self.reply.take() {
            reply.send(answer);
        }
    }
}

/// Whether `deadline` has passed.
pub(in crate::service) fn past(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
}

/// Resolves when `deadline` passes; never without one.
pub(in crate::service) async fn expiry(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

/// Waits for a solver thread's reply until `deadline`. A closed reply: the
/// pool dropped the task unrun because its deadline passed (the timer may
/// fire a little after the solver thread saw it pass), or it panicked (and
/// was logged).
pub(super) async fn reply_by<T>(
    replied: oneshot::Receiver<T>,
    deadline: Option<Instant>,
) -> Result<T, Failure> {
    let replied = match deadline {
        None => replied.await,
        Some(d) => tokio::time::timeout_at(d.into(), replied)
            .await
            .map_err(|_| Failure::DeadlineExceeded)?,
    };
    replied.map_err(|_| {
        if past(deadline) {
            Failure::DeadlineExceeded
        } else {
            Failure::Panicked
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_pending_task_is_wanted_until_its_caller_leaves_its_deadline_passes_or_it_answers() {
        let (reply, replied) = oneshot::channel::<u32>();
        let pending = Pending::new(None, reply);
        assert!(pending.wanted() && !pending.cancelled());
        drop(replied);
        assert!(!pending.wanted() && pending.cancelled(), "the caller left");

        let (reply, _replied) = oneshot::channel::<u32>();
        let expired = Some(Instant::now() - Duration::from_millis(1));
        let pending = Pending::new(expired, reply);
        assert!(!pending.wanted(), "the deadline passed");
        assert!(!pending.cancelled(), "a deadline is not a cancellation");

        let (reply, mut replied) = oneshot::channel::<u32>();
        let mut pending = Pending::new(None, reply);
        pending.answer(7);
        pending.answer(8);
        assert_eq!(replied.try_recv(), Ok(7));
        assert!(!pending.wanted() && pending.cancelled(), "answered once");
    }
}
