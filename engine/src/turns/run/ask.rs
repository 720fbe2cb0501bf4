//! Server requests to a thread's followers (approvals, user input, client tool calls): who is
//! asked, and which answer counts.

use agentwire_protocol::method::{Method, Request};
use agentwire_runtime::ConnectionId;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::Value;

use super::TurnRun;
use crate::threads::asks::RemoteAsk;

/// How much longer than a client's answer may take the answers of other servers are waited for
/// (they put the request to their own clients under the same timeout, then answer).
const ELSEWHERE_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl TurnRun {
    /// Sends the server request `M` to every connection following the thread (each under its
    /// own request id), and to any that joins while it waits, once it has its `thread/resume`
    /// answer; in a shared store, to the followers on other servers too, through theirs. The
    /// first well-formed answer wins and the other requests are withdrawn
    /// (`serverRequest/resolved`). `Some(Err(reason))` when no follower gave a well-formed
    /// answer (timed out, answered with an error or malformed, left, or none follows);
    /// `None` when the turn was interrupted while waiting (the requests are withdrawn).
    pub(super) async fn ask_followers<M: Request>(
        &mut self,
        params: &M::Params,
    ) -> Option<Result<M::Response, String>> {
        let threads = self.turns.threads.clone();
        let thread_id = self.thread_id.clone();
        let patience = self.peer.hub().request_timeout() + ELSEWHERE_GRACE;
        let asked = async {
            let subscribers = &threads.subscribers;
            let (joined, joined_elsewhere, left_elsewhere) = (
                subscribers.join_signal(),
                subscribers.elsewhere.join_signal(),
                subscribers.elsewhere.leave_signal(),
            );
            let mut asked: Vec<ConnectionId> = Vec::new();
            let mut pending = FuturesUnordered::new();
            let mut elsewhere = OtherServers::default();
            let mut last_error = "no client follows the thread to answer".to_owned();
            let deadline = tokio::time::sleep(patience);
            tokio::pin!(deadline);
            loop {
                // Armed before the followers are read, so that none joining (or server leaving)
                // after is missed.
                let (join, join_elsewhere, leave_elsewhere) = (
                    joined.notified(),
                    joined_elsewhere.notified(),
                    left_elsewhere.notified(),
                );
                for peer in subscribers.of(&thread_id) {
                    if !asked.contains(&peer.connection_id()) {
                        asked.push(peer.connection_id());
                        pending.push(async move { peer.request::<M>(params).await });
                    }
                }
                elsewhere.ask_servers::<M>(subscribers, &thread_id, params);
                if pending.is_empty() && !elsewhere.waiting() {
                    break Err(format!("{}: {last_error}", <M as Method>::NAME));
                }
                tokio::select! {
                    Some(answer) = pending.next() => match answer {
                        Ok(answer) => break Ok(answer),
                        Err(error) => last_error = error.to_string(),
                    },
                    Some(answer) = elsewhere.next() => match answer {
                        Ok(value) => match serde_json::from_value::<M::Response>(value) {
                            Ok(answer) => break Ok(answer),
                            Err(error) => {
                                // Anyone who may `NOTIFY` can send it: not counted as the
                                // answer of a server, whose own may still come.
                                elsewhere.uncount();
                                tracing::warn!(%error, "malformed answer from elsewhere dropped");
                                last_error = format!("another server's answer is malformed: {error}");
                            }
                        },
                        Err(error) => last_error = error,
                    },
                    () = join => {}
                    () = join_elsewhere => elsewhere.again(),
                    // Counted again above: a server that left (or died) answers no more.
                    () = leave_elsewhere => {}
                    () = &mut deadline, if elsewhere.waiting() => {
                        elsewhere.give_up();
                        last_error = "no answer came from the other servers in time".to_owned();
                    }
                }
            }
            // The requests still waiting are withdrawn when `pending` and `elsewhere` are dropped
            // here.
        };
        self.unless_interrupted(asked).await
    }
}

/// One request's standing with the other servers of a shared store.
#[derive(Default)]
struct OtherServers {
    ask: Option<RemoteAsk>,
    /// Servers that follow the thread (as last counted), and answers had from them (each
    /// answers once; one that counted ends the wait).
    servers: usize,
    answered: usize,
    /// Given up on (in time no answer came): not asked again.
    closed: bool,
}

impl OtherServers {
    /// Puts the request to the other servers' followers, once some follow the thread.
    fn ask_servers<M: Request>(
        &mut self,
        subscribers: &crate::threads::subscribers::Subscribers,
        thread_id: &str,
        params: &M::Params,
    ) {
        self.servers = subscribers.elsewhere.servers_following(thread_id);
        if self.ask.is_none() && !self.closed {
            self.ask = subscribers.ask_elsewhere::<M>(thread_id, params);
        }
    }

    /// Whether an answer from another server may still come.
    fn waiting(&self) -> bool {
        self.ask.is_some() && self.answered < self.servers
    }

    /// The next answer of another server; never, while none is waited for.
    async fn next(&mut self) -> Option<Result<Value, String>> {
        match &mut self.ask {
            Some(ask) if self.answered < self.servers => {
                let answer = ask.next().await;
                self.answered += 1;
                answer
            }
            _ => std::future::pending().await,
        }
    }

    /// Takes back the count of the last answer, which was malformed: a server whose answer it
    /// claims to be may still answer.
    fn uncount(&mut self) {
        self.answered = self.answered.saturating_sub(1);
    }

    /// Puts the request again, for a server that started following the thread.
    fn again(&self) {
        if let Some(ask) = &self.ask {
            ask.again();
        }
    }

    /// Stops waiting for the other servers (their requests are withdrawn).
    fn give_up(&mut self) {
        self.ask = None;
        self.closed = true;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use agentwire_protocol::FileChangeRequestApprovalParams;
    use agentwire_protocol::methods::FileChangeRequestApproval;

    use super::*;
    use crate::threads::subscribers::Subscribers;
    use agentwire_store::Relay;

    /// Counts what is asked and withdrawn through it.
    #[derive(Debug, Default)]
    struct Counted {
        asks: AtomicUsize,
        withdrawn: AtomicUsize,
    }

    impl Relay for Counted {
        fn publish(&self, _: &str, _: &'static str, _: Vec<u8>) {}
        fn interrupt(&self, _: &str, _: &str) {}
        fn follow(&self, _: &str, _: bool) {}
        fn join(&self, _: &str, _: &str) {}
        fn ask(&self, _: &str, _: &str, _: &'static str, _: Vec<u8>) {
            self.asks.fetch_add(1, Ordering::Relaxed);
        }
        fn answer(&self, _: &str, _: &str, _: Result<Value, String>) {}
        fn withdraw(&self, _: &str, _: &str) {
            self.withdrawn.fetch_add(1, Ordering::Relaxed);
        }
        fn steer(&self, _: &str, _: &str, _: Vec<u8>) {}
    }

    #[test]
    fn a_request_is_put_to_other_servers_once_and_never_again_once_given_up() {
        let subscribers = Subscribers::default();
        let relay = Arc::new(Counted::default());
        subscribers.elsewhere.relay_through(relay.clone());
        let params = FileChangeRequestApprovalParams::builder()
            .thread_id("t")
            .turn_id("u")
            .item_id("i")
            .started_at_ms(0)
            .build();
        let mut others = OtherServers::default();
        others.ask_servers::<FileChangeRequestApproval>(&subscribers, "t", &params);
        assert!(!others.waiting(), "no other server follows the thread");
        assert_eq!(relay.asks.load(Ordering::Relaxed), 0);

        assert!(subscribers.elsewhere.heard("t", "other".to_owned(), true));
        others.ask_servers::<FileChangeRequestApproval>(&subscribers, "t", &params);
        others.ask_servers::<FileChangeRequestApproval>(&subscribers, "t", &params);
        assert!(others.waiting());
        assert_eq!(relay.asks.load(Ordering::Relaxed), 1, "asked once");

        others.give_up();
        assert_eq!(relay.withdrawn.load(Ordering::Relaxed), 1, "withdrawn");
        others.ask_servers::<FileChangeRequestApproval>(&subscribers, "t", &params);
        assert!(!others.waiting());
        assert_eq!(relay.asks.load(Ordering::Relaxed), 1, "not asked again");
    }
}
