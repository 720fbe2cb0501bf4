//! The workers phase (`--postgres ADMIN_URL`): agentwire workers sharing one PostgreSQL thread
//! store, one worker against two. Each round makes a fresh database per worker count (with
//! `psql`, through the cluster's `postgres` database that `ADMIN_URL` names), starts that many
//! servers on it, opens S sessions spread evenly over them and runs one turn on each at once, in
//! waves as the streaming phases do ([`driver::stream_waves`]): aggregate deltas/s, the workers'
//! CPU per 1000 deltas, and whether every delta of every turn came once and in order. The figure
//! is the median over rounds; the ratio is two workers' over one's. Then two workers again with
//! every turn also followed from the other worker, so that each of its notifications crosses the
//! relay: the followers' deltas/s beside the runners' (one wave: a follower follows one turn).

use std::process::Command;
use std::time::Duration;

use agentwire_bench::stats::Samples;

use crate::mock::MockModel;
use crate::server::{Contender, Running};
use crate::{StreamFigures, driver, tally};

/// Worker counts compared.
const WORKERS: [usize; 2] = [1, 2];

/// What the phase runs.
#[derive(Debug)]
pub struct Shape {
    /// Concurrent turns, spread over the workers.
    pub sessions: usize,
    /// Deltas per turn.
    pub deltas: usize,
    /// Rounds; every figure is the median over them.
    pub rounds: usize,
    /// How long the waves of one measurement stream for at least.
    pub least: Duration,
    /// Cores each worker is held to (`--worker-cpu`), if any.
    pub cpu: Option<f64>,
}

/// What the phase measured, per worker count.
#[derive(Debug, Default)]
pub struct Figures {
    rates: [Samples; WORKERS.len()],
    /// The workers' CPU per 1000 deltas, all workers together, ms.
    cpu_per_1000_ms: [Samples; WORKERS.len()],
    /// The turns run, in every measurement.
    run: StreamFigures,
    /// Two workers, every turn followed from the other: the runners' deltas/s, the followers',
    /// and the followed turns.
    followed_rates: Samples,
    relayed_rates: Samples,
    followed: StreamFigures,
}

/// Runs `rounds` rounds of the phase.
pub async fn measure(
    contender: &Contender,
    mock: &MockModel,
    admin: &str,
    shape: &Shape,
    limit: Duration,
) -> Result<Figures, String> {
    let &Shape {
        sessions,
        deltas,
        rounds,
        least,
        cpu,
    } = shape;
    let mut figures = Figures::default();
    mock.set_deltas(deltas);
    for round in 0..rounds {
        for (slot, workers) in WORKERS.into_iter().enumerate() {
            let tag = format!("r{round}_w{workers}");
            let store = Store::make(admin, &tag)?;
            let servers = store.start(contender, mock, workers, &tag, cpu)?;
            let all = spread(&servers, sessions).await?;
            let (streamed, cpu_seconds, back) =
                driver::stream_waves(all, deltas, least, limit, &servers).await?;
            drop(back);
            tally(&mut figures.run, &streamed.turns);
            let rate = rate_of(&streamed.turns, streamed.wall);
            let cpu_per_1000 = crate::cpu_per_1000_ms(cpu_seconds, &streamed.turns);
            eprintln!(
                "  workers round {}/{rounds}: {workers} worker(s): {rate:.0} deltas/s, \
                 {cpu_per_1000:.1} ms CPU per 1000 deltas",
                round + 1
            );
            figures.rates[slot].push(rate);
            figures.cpu_per_1000_ms[slot].push(cpu_per_1000);
            drop(servers);
            store.remove()?;
        }
        followed_round(&mut figures, contender, mock, admin, shape, round, limit).await?;
    }
    Ok(figures)
}

/// Two workers again, each turn also followed by a client of the other worker (resumed before
/// the turn starts), so that every notification crosses the relay: the runners' and the
/// followers' aggregate deltas/s, and whether every followed turn came whole.
async fn followed_round(
    figures: &mut Figures,
    contender: &Contender,
    mock: &MockModel,
    admin: &str,
    shape: &Shape,
    round: usize,
    limit: Duration,
) -> Result<(), String> {
    let (sessions, deltas) = (shape.sessions, shape.deltas);
    let tag = format!("r{round}_followed");
    let store = Store::make(admin, &tag)?;
    let servers = store.start(contender, mock, 2, &tag, shape.cpu)?;
    let all = spread(&servers, sessions).await?;
    let mut followers = Vec::with_capacity(all.len());
    for (n, (_, thread)) in all.iter().enumerate() {
        // `spread` puts the first sessions on the first worker: follow each from the other.
        let other = &servers[usize::from(n < sessions / 2 + sessions % 2)];
        let mut conn = driver::Conn::open(&other.url()).await?;
        conn.resume(thread).await?;
        followers.push(conn);
    }
    // Let every worker hear who follows what before the turns begin.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let start = std::time::Instant::now();
    let following: Vec<_> = followers
        .into_iter()
        .map(|mut conn| tokio::spawn(async move { driver::follow_turn(&mut conn, deltas).await }))
        .collect();
    let (streamed, back) = driver::stream_once(all, deltas, limit).await?;
    let mut followed = Vec::with_capacity(following.len());
    for task in following {
        let report = tokio::time::timeout(limit, task)
            .await
            .map_err(|_| "a followed turn did not complete in time".to_owned())?
            .map_err(|e| format!("task failed: {e}"))??;
        followed.push(report);
    }
    let wall = start.elapsed();
    drop(back);
    tally(&mut figures.run, &streamed.turns);
    tally(&mut figures.followed, &followed);
    let (ran, relayed) = (
        rate_of(&streamed.turns, streamed.wall),
        rate_of(&followed, wall),
    );
    eprintln!(
        "  workers round {}: followed from the other worker: {ran:.0} deltas/s run, {relayed:.0} relayed",
        round + 1
    );
    figures.followed_rates.push(ran);
    figures.relayed_rates.push(relayed);
    drop(servers);
    store.remove()
}

/// Deltas per second that `turns` received over `wall`.
fn rate_of(turns: &[driver::TurnReport], wall: Duration) -> f64 {
    let delivered: usize = turns.iter().map(|t| t.arrivals.len()).sum();
    delivered as f64 / wall.as_secs_f64().max(1e-9)
}

/// `sessions` sessions spread evenly over `servers`, the first server's first.
async fn spread(
    servers: &[Running],
    sessions: usize,
) -> Result<Vec<(driver::Conn, String)>, String> {
    let workers = servers.len();
    let mut all = Vec::with_capacity(sessions);
    for (n, server) in servers.iter().enumerate() {
        let share = sessions / workers + usize::from(n < sessions % workers);
        let work = server.work.to_string_lossy().into_owned();
        all.extend(driver::sessions(&server.url(), &work, share).await?);
    }
    Ok(all)
}

/// A fresh database of the cluster for one measurement.
struct Store<'a> {
    admin: &'a str,
    database: String,
}

impl<'a> Store<'a> {
    /// Makes the database of measurement `tag` (dropping one left over).
    fn make(admin: &'a str, tag: &str) -> Result<Self, String> {
        let database = format!("sessions_bench_{}_{tag}", std::process::id());
        psql(admin, &format!("DROP DATABASE IF EXISTS {database}"))?;
        psql(admin, &format!("CREATE DATABASE {database}"))?;
        Ok(Self { admin, database })
    }

    /// Starts `workers` servers on the database, each held to `cpu` cores if given.
    fn start(
        &self,
        contender: &Contender,
        mock: &MockModel,
        workers: usize,
        tag: &str,
        cpu: Option<f64>,
    ) -> Result<Vec<Running>, String> {
        let base = self
            .admin
            .strip_suffix("/postgres")
            .ok_or("--postgres must name the cluster's postgres database (…/postgres)")?;
        let on_store = Contender {
            extra_args: vec!["--store".into(), format!("{base}/{}", self.database)],
            ..contender.clone()
        };
        (0..workers)
            .map(|n| {
                let mut running =
                    Running::start(&on_store, &mock.base_url(), &format!("{tag}-{n}"))?;
                if let Some(cores) = cpu {
                    running.cap_cpu(cores)?;
                }
                Ok(running)
            })
            .collect()
    }

    /// Removes the database (its servers stopped first).
    fn remove(self) -> Result<(), String> {
        psql(
            self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database),
        )
    }
}

/// The phase's table.
pub fn render(figures: &Figures, shape: &Shape) -> String {
    let (sessions, deltas, rounds) = (shape.sessions, shape.deltas, shape.rounds);
    let least = shape.least.as_secs_f64();
    let capped = shape.cpu.map_or(String::new(), |cores| {
        format!(", each worker held to {cores} core(s) (--worker-cpu)")
    });
    let rate = |slot: usize| figures.rates[slot].median();
    let cell = |value: Option<f64>| value.map_or("—".to_owned(), |v| format!("{:.0}k", v / 1e3));
    let cpu = |slot: usize| {
        figures.cpu_per_1000_ms[slot]
            .median()
            .map_or("—".to_owned(), |ms| format!("{ms:.1} ms"))
    };
    let ratio = match (rate(0), rate(1)) {
        (Some(one), Some(two)) if one > 0.0 => format!("{:.2}×", two / one),
        _ => "—".to_owned(),
    };
    let complete = format!("{} of {}", figures.run.turns_ok, figures.run.turns);
    let mut out = format!(
        "\nagentwire workers on one PostgreSQL store: S = {sessions} turns of {deltas} deltas at \
         once, spread over the workers{capped}, in waves for at least {least:.1} s, median of \
         {rounds} round(s)\n\n\
         | workers | aggregate deltas/s | workers' CPU per 1000 deltas |\n|---|---|---|\n\
         | 1 | {} | {} |\n| 2 | {} | {} |\n\n\
         two workers / one: {ratio} (target ≥ 1.6×); turns complete, every delta once and in \
         order: {complete}\n",
        cell(rate(0)),
        cpu(0),
        cell(rate(1)),
        cpu(1),
    );
    out.push_str(&format!(
        "two workers, every turn also followed from the other worker: {} deltas/s run, {} \
         delivered to the followers; followed turns whole, every delta once and in order: {} of {}\n",
        cell(figures.followed_rates.median()),
        cell(figures.relayed_rates.median()),
        figures.followed.turns_ok,
        figures.followed.turns,
    ));
    let defect = figures.run.defect.clone().or_else(|| {
        figures
            .followed
            .defect
            .as_ref()
            .map(|defect| format!("followed: {defect}"))
    });
    if let Some(defect) = &defect {
        out.push_str(&format!("first defect: {defect}\n"));
    }
    let cap = shape
        .cpu
        .map_or(String::new(), |cores| format!(" --worker-cpu {cores}"));
    out.push_str(&format!(
        "reproduce: {} --postgres \"$(bash scripts/postgres-cluster.sh start)\"{cap}\n",
        crate::REPRODUCE
    ));
    out
}

/// Runs `sql` on `url` with `psql`.
fn psql(url: &str, sql: &str) -> Result<(), String> {
    let output = Command::new("psql")
        .args([url, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .map_err(|e| format!("cannot run psql: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}
