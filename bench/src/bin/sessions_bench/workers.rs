//! The workers phase (`--postgres ADMIN_URL`): agentwire workers sharing one PostgreSQL thread
//! store, one worker against two. Each round makes a fresh database per worker count (with
//! `psql`, through the cluster's `postgres` database that `ADMIN_URL` names), starts that many
//! servers on it, opens S sessions spread evenly over them and runs one turn on each at once, as
//! the streaming phases do: aggregate deltas/s, and whether every delta of every turn came once
//! and in order. The figure is the median over rounds; the ratio is two workers' over one's.

use std::process::Command;
use std::time::Duration;

use agentwire_bench::stats::Samples;

use crate::driver;
use crate::mock::MockModel;
use crate::server::{Contender, Running};

/// Worker counts compared.
const WORKERS: [usize; 2] = [1, 2];

/// What the phase measured, per worker count.
#[derive(Debug, Default)]
pub struct Figures {
    rates: [Samples; WORKERS.len()],
    turns: usize,
    turns_ok: usize,
    defect: Option<String>,
}

/// Runs `rounds` rounds of the phase.
pub async fn measure(
    contender: &Contender,
    mock: &MockModel,
    admin: &str,
    (sessions, deltas, rounds): (usize, usize, usize),
    limit: Duration,
) -> Result<Figures, String> {
    let mut figures = Figures::default();
    mock.set_deltas(deltas);
    for round in 0..rounds {
        for (slot, workers) in WORKERS.into_iter().enumerate() {
            let database = format!("sessions_bench_{}_r{round}_w{workers}", std::process::id());
            psql(admin, &format!("DROP DATABASE IF EXISTS {database}"))?;
            psql(admin, &format!("CREATE DATABASE {database}"))?;
            let base = admin
                .strip_suffix("/postgres")
                .ok_or("--postgres must name the cluster's postgres database (…/postgres)")?;
            let on_store = Contender {
                extra_args: vec!["--store".into(), format!("{base}/{database}")],
                ..contender.clone()
            };
            let servers = (0..workers)
                .map(|n| {
                    Running::start(
                        &on_store,
                        &mock.base_url(),
                        &format!("w{workers}-{n}-r{round}"),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut all = Vec::with_capacity(sessions);
            for (n, server) in servers.iter().enumerate() {
                let share = sessions / workers + usize::from(n < sessions % workers);
                let work = server.work.to_string_lossy().into_owned();
                all.extend(driver::sessions(&server.url(), &work, share).await?);
            }
            let (streamed, back) = driver::stream_once(all, deltas, limit).await?;
            drop(back);
            figures.turns += streamed.turns.len();
            for turn in &streamed.turns {
                match &turn.defect {
                    None => figures.turns_ok += 1,
                    Some(defect) => {
                        figures.defect.get_or_insert_with(|| defect.clone());
                    }
                }
            }
            let delivered: usize = streamed.turns.iter().map(|t| t.arrivals.len()).sum();
            let rate = delivered as f64 / streamed.wall.as_secs_f64().max(1e-9);
            eprintln!(
                "  workers round {}/{rounds}: {workers} worker(s): {rate:.0} deltas/s",
                round + 1
            );
            figures.rates[slot].push(rate);
            drop(servers);
            psql(
                admin,
                &format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
            )?;
        }
    }
    Ok(figures)
}

/// The phase's table.
pub fn render(figures: &Figures, sessions: usize, deltas: usize, rounds: usize) -> String {
    let rate = |slot: usize| figures.rates[slot].median();
    let cell = |value: Option<f64>| value.map_or("—".to_owned(), |v| format!("{:.0}k", v / 1e3));
    let ratio = match (rate(0), rate(1)) {
        (Some(one), Some(two)) if one > 0.0 => format!("{:.2}×", two / one),
        _ => "—".to_owned(),
    };
    let complete = format!("{} of {}", figures.turns_ok, figures.turns);
    let mut out = format!(
        "\nagentwire workers on one PostgreSQL store: S = {sessions} turns of {deltas} deltas \
         spread over the workers, median of {rounds} round(s)\n\n\
         | workers | aggregate deltas/s |\n|---|---|\n| 1 | {} |\n| 2 | {} |\n\n\
         two workers / one: {ratio} (target ≥ 1.6×); turns complete, every delta once and in \
         order: {complete}\n",
        cell(rate(0)),
        cell(rate(1)),
    );
    if let Some(defect) = &figures.defect {
        out.push_str(&format!("first defect: {defect}\n"));
    }
    out.push_str(&format!(
        "reproduce: {} --postgres \"$(bash scripts/postgres-cluster.sh start)\"\n",
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
