//! Hint's and Rate's work that is not a search, done at once on a solver
//! thread.

use std::time::Instant;

use tokio::sync::oneshot;

use super::pending::{Pending, reply_by};
use crate::service::pool::{Step, Turn, Work};
use crate::service::status::Failure;
use crate::service::{Sudoku, Tenant};

impl Sudoku {
    /// Runs `work` on a solver thread for `tenant`, under a server-wide
    /// permit (or sheds the call): the Hint and Rate work that is not a
    /// search. `work` is handed a check it must ask now and then, false
    /// once the deadline has passed or the caller has left: a rating's
    /// chains can take seconds, and they stop there. An engine search
    /// never runs here: it is sliced under the work budget (see
    /// [`Self::solve_job`]).
    /// It starts only if the deadline has not passed and the caller still
    /// waits.
    pub(in crate::service) async fn on_pool<R: Send + 'static>(
        &self,
        tenant: Tenant,
        deadline: Option<Instant>,
        work: impl FnOnce(&dyn Fn() -> bool) -> R + Send + 'static,
    ) -> Result<R, Failure> {
        let _permit = self
            .shared
            .permits
            .try_acquire()
            .map_err(|_| Failure::Overloaded)?;
        let (reply, replied) = oneshot::channel();
        self.shared.pool.submit(
            tenant,
            Box::new(OneShot {
                work: Some(work),
                pending: Pending::new(deadline, reply),
            }),
        );
        reply_by(replied, deadline).await
    }
}

/// Work done at once on a solver thread, its result sent back.
struct OneShot<F, R> {
    work: Option<F>,
    pending: Pending<oneshot::Sender<R>>,
}

impl<F: FnOnce(&dyn Fn() -> bool) -> R + Send, R: Send> Work for OneShot<F, R> {
    fn wanted(&self) -> bool {
        self.pending.wanted()
    }

    fn run(&mut self, _: &Turn) -> Step {
        if let Some(work) = self.work.take() {
            let pending = &self.pending;
            let answer = work(&|| pending.wanted());
            self.pending.answer(answer);
        }
        Step::Done
    }
}
