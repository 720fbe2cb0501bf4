//! The connections of one PostgreSQL store: a few threads, each owning one client, that run
//! the store's queries for callers which wait for the answer.
//!
//! The synchronous `postgres` client drives its connection with a runtime of its own, which
//! must never be entered (nor dropped) from inside the server's async workers. Keeping every
//! client on a thread of the store makes that impossible to get wrong: each thread connects,
//! serves and closes its own client, and a caller hands a closure over and blocks on its
//! answer. A client whose connection broke is replaced on the next call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use agentwire_support::lock;
use postgres::{Client, NoTls};

use crate::error::ThreadError;

/// How long connecting may take when the URL sets no `connect_timeout`.
pub(super) const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// One query job: runs on a database thread with its client.
type Work = Box<dyn FnOnce(&mut Client) + Send>;

/// A small pool of database threads.
pub(super) struct Db {
    jobs: Mutex<Option<mpsc::Sender<Work>>>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    /// The URL with the password left out, for errors.
    shown: String,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("url", &self.shown)
            .finish_non_exhaustive()
    }
}

impl Db {
    /// Starts `size` database threads for `config` (`shown` names the store in errors); each
    /// connects first, so a bad URL or an unreachable server is reported here.
    pub(super) fn start(
        config: &postgres::Config,
        shown: String,
        size: usize,
    ) -> Result<Self, String> {
        let (jobs, queue) = mpsc::channel::<Work>();
        let queue = Arc::new(Mutex::new(queue));
        let mut threads = Vec::with_capacity(size);
        for n in 0..size.max(1) {
            let (config, queue) = (config.clone(), Arc::clone(&queue));
            let (connected, ready) = mpsc::sync_channel(1);
            let thread = std::thread::Builder::new()
                .name(format!("agentwire-pg-{n}"))
                .spawn(move || match connect(&config) {
                    Ok(client) => {
                        let _ = connected.send(Ok(()));
                        serve(client, &config, &queue);
                    }
                    Err(error) => {
                        let _ = connected.send(Err(error));
                    }
                })
                .map_err(|e| format!("cannot start a database thread: {e}"))?;
            threads.push(thread);
            match ready.recv() {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Err(format!("cannot connect to {shown}: {error}")),
                Err(_) => return Err(format!("cannot connect to {shown}: the thread stopped")),
            }
        }
        Ok(Self {
            jobs: Mutex::new(Some(jobs)),
            threads: Mutex::new(threads),
            shown,
        })
    }

    /// Runs `work` on a database thread and waits for its answer. Errors name the store.
    pub(super) fn run<T, F>(&self, work: F) -> Result<T, ThreadError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Client) -> Result<T, Fault> + Send + 'static,
    {
        let (answer, reply) = mpsc::sync_channel(1);
        let job: Work = Box::new(move |client| {
            let _ = answer.send(work(client));
        });
        let sent = lock(&self.jobs)
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(ThreadError::Storage(format!(
                "{}: the store is closed",
                self.shown
            )));
        }
        match reply.recv() {
            Ok(result) => result.map_err(|e| storage_error(&self.shown, &e)),
            Err(_) => Err(ThreadError::Storage(format!(
                "{}: the database thread stopped",
                self.shown
            ))),
        }
    }
}

impl Db {
    /// Runs `work` on a database thread without waiting for it; a failure is logged.
    pub(super) fn spawn<F>(&self, what: &'static str, work: F)
    where
        F: FnOnce(&mut Client) -> Result<(), Fault> + Send + 'static,
    {
        let shown = self.shown.clone();
        let job: Work = Box::new(move |client| {
            if let Err(fault) = work(client) {
                let error = storage_error(&shown, &fault);
                tracing::warn!(%error, what, "store operation failed");
            }
        });
        if let Some(jobs) = lock(&self.jobs).as_ref() {
            let _ = jobs.send(job);
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        lock(&self.jobs).take();
        for thread in lock(&self.threads).drain(..) {
            let _ = thread.join();
        }
    }
}

/// One database thread: runs jobs until the pool closes, reconnecting a broken client first.
fn serve(mut client: Client, config: &postgres::Config, queue: &Mutex<mpsc::Receiver<Work>>) {
    loop {
        let job = match lock(queue).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        if client.is_closed() {
            tracing::warn!("thread store connection lost; reconnecting (its turn claims are gone)");
            match connect(config) {
                Ok(fresh) => client = fresh,
                Err(error) => tracing::warn!(%error, "cannot reconnect to the thread store"),
            }
        }
        job(&mut client);
    }
}

/// Connection attempts that may be under way at once in this process, those given up on but
/// still waiting for their server included: past it, an attempt fails at once.
const MAX_CONNECTING: usize = 16;

/// Connection attempts under way ([`MAX_CONNECTING`] at most).
static CONNECTING: AtomicUsize = AtomicUsize::new(0);

/// One of the [`MAX_CONNECTING`] connection attempts, given back when dropped.
struct Attempt(());

impl Attempt {
    /// A place for one more attempt, if there is one.
    fn take() -> Option<Self> {
        CONNECTING
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_CONNECTING).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(()))
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        CONNECTING.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Opens a connection with `config`, giving up once its `connect_timeout` ([`CONNECT_TIMEOUT`]
/// when the URL sets none) has passed for each host it names. As with libpq, the bound covers
/// the whole establishment, start-up and authentication included: the client's own timeout
/// covers only the socket connect, so a server that accepts and never answers would hold it
/// forever. That connect cannot be interrupted, so it runs on a thread of its own, left behind
/// at the bound; it ends when the server answers or hangs up, closing what it got. So that a
/// server that never answers cannot pile up such threads, at most [`MAX_CONNECTING`] attempts
/// are under way at once; past that, an attempt fails at once. An error says why, without the
/// URL.
pub(super) fn connect(config: &postgres::Config) -> Result<Client, String> {
    let attempt = Attempt::take().ok_or_else(|| {
        format!(
            "{MAX_CONNECTING} earlier connection attempts are still waiting for the server; \
             not starting another"
        )
    })?;
    let hosts = config
        .get_hosts()
        .len()
        .max(config.get_hostaddrs().len())
        .max(1);
    let bound = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT)
        .saturating_mul(u32::try_from(hosts).unwrap_or(u32::MAX));
    let (connected, ready) = mpsc::sync_channel(1);
    let config = config.clone();
    std::thread::Builder::new()
        .name("agentwire-pg-connect".to_owned())
        .spawn(move || {
            let _ = connected.send(config.connect(NoTls));
            drop(attempt);
        })
        .map_err(|e| format!("cannot start a thread to connect: {e}"))?;
    match ready.recv_timeout(bound) {
        Ok(connected) => connected.map_err(|e| describe(&e)),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "the server did not complete the connection within {} s",
            bound.as_secs_f64()
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Err("the connecting thread stopped".to_owned())
        }
    }
}

/// Why a store operation failed.
#[derive(Debug)]
pub(super) enum Fault {
    /// The database refused or the connection failed.
    Db(postgres::Error),
    /// Anything else, said in words.
    Other(String),
}

impl From<postgres::Error> for Fault {
    fn from(error: postgres::Error) -> Self {
        Fault::Db(error)
    }
}

/// A fault as a storage error naming the store, with the server's message and detail when it
/// sent them.
pub(super) fn storage_error(shown: &str, fault: &Fault) -> ThreadError {
    let error = match fault {
        Fault::Db(error) => error,
        Fault::Other(text) => return ThreadError::Storage(format!("{shown}: {text}")),
    };
    ThreadError::Storage(format!("{shown}: {}", describe(error)))
}

/// What `error` says: the server's message (and detail) for an error the server sent, which
/// the error's own `Display` leaves out.
pub(super) fn describe(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_owned(),
        },
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::time::{Duration, Instant};

    use super::{MAX_CONNECTING, connect};

    /// A server that accepts connections and never answers: each attempt is given up at the
    /// bound, its thread left waiting, and once MAX_CONNECTING wait, more attempts fail at once
    /// instead of leaving more threads behind.
    #[test]
    fn attempts_waiting_on_a_silent_server_are_bounded() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
            }
        });
        let config: postgres::Config =
            format!("postgres://agentwire@127.0.0.1:{port}/agentwire?connect_timeout=1")
                .parse()
                .expect("a URL");
        let attempts: Vec<_> = (0..MAX_CONNECTING + 4)
            .map(|_| {
                let config = config.clone();
                std::thread::spawn(move || {
                    let started = Instant::now();
                    let error = connect(&config).err().expect("no server answers");
                    (error, started.elapsed())
                })
            })
            .collect();
        let outcomes: Vec<(String, Duration)> = attempts
            .into_iter()
            .map(|attempt| attempt.join().expect("an attempt"))
            .collect();
        let (refused, timed_out): (Vec<_>, Vec<_>) = outcomes
            .iter()
            .partition(|(error, _)| error.contains("still waiting for the server"));
        assert_eq!(refused.len(), 4, "{outcomes:?}");
        assert_eq!(timed_out.len(), MAX_CONNECTING, "{outcomes:?}");
        for (error, took) in timed_out {
            assert!(error.contains("within 1 s"), "{error}");
            assert!(*took >= Duration::from_millis(900), "{took:?}");
        }
        for (_, took) in refused {
            assert!(*took < Duration::from_millis(900), "refused after {took:?}");
        }
        // The bound still holds afterwards: the given-up attempts still wait.
        let error = connect(&config).err().expect("no place");
        assert!(error.contains("still waiting for the server"), "{error}");
    }
}
