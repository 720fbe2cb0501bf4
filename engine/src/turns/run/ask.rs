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
            let (joined, joined_elsewhere) = (
                subscribers.join_signal(),
                subscribers.elsewhere.join_signal(),
            );
            let mut asked: Vec<ConnectionId> = Vec::new();
            let mut pending = FuturesUnordered::new();
            let mut elsewhere = OtherServers::default();
            let mut last_error = "no client follows the thread to answer".to_owned();
            let deadline = tokio::time::sleep(patience);
            tokio::pin!(deadline);
            loop {
                // Armed before the followers are read, so that none joining after is missed.
                let (join, join_elsewhere) = (joined.notified(), joined_elsewhere.notified());
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
                                last_error = format!("another server's answer is malformed: {error}");
                            }
                        },
                        Err(error) => last_error = error,
                    },
                    () = join => {}
                    () = join_elsewhere => elsewhere.again(),
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
        if self.ask.is_none() {
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

    /// Puts the request again, for a server that started following the thread.
    fn again(&self) {
        if let Some(ask) = &self.ask {
            ask.again();
        }
    }

    /// Stops waiting for the other servers (their requests are withdrawn).
    fn give_up(&mut self) {
        self.ask = None;
    }
}
