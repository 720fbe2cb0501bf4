//! The status line at the bottom of the screen and the `/status` report: the model and
//! reasoning effort in use (as the server reported them, see [`crate::settings`]), what is
//! running and for how long, the thread and its token usage.

use std::time::Duration;

use agentwire_protocol::ThreadTokenUsage;

use crate::settings::InUse;

/// What the client is doing, for the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Nothing runs; a message starts a turn.
    Ready,
    /// A turn runs, started this long ago.
    Working(Duration),
    /// A turn, started this long ago, waits for the user to answer an approval.
    WaitingForApproval(Duration),
}

/// Everything the status line and `/status` show.
#[derive(Debug, Clone, Copy)]
pub struct Status<'a> {
    /// The current thread, once there is one.
    pub thread: Option<&'a str>,
    /// What the thread runs with.
    pub in_use: &'a InUse,
    /// The reasoning effort the model uses when none is chosen (from `model/list`).
    pub default_effort: Option<&'a str>,
    /// What is running.
    pub activity: Activity,
    /// The thread's token usage, as last reported.
    pub usage: Option<&'a ThreadTokenUsage>,
}

impl Status<'_> {
    /// The one-line summary: ` MODEL · effort E · ACTIVITY · N tokens · P% context left ·
    /// thread ID` (the least useful last, as a narrow window cuts the end).
    pub fn line(&self) -> String {
        let model = self.in_use.model.as_deref().unwrap_or("model unknown");
        let effort = self
            .in_use
            .effort
            .as_deref()
            .or(self.default_effort)
            .unwrap_or("default");
        let activity = match self.activity {
            Activity::Ready => "ready".to_owned(),
            Activity::Working(since) => format!("working {}", elapsed(since)),
            Activity::WaitingForApproval(since) => {
                format!("waiting for your approval ({})", elapsed(since))
            }
        };
        let mut line = format!(" {model} · effort {effort} · {activity}");
        if let Some(usage) = self.usage {
            line.push_str(&format!(" · {} tokens", count(usage.total.total_tokens)));
            if let Some(left) = context_left(usage) {
                line.push_str(&format!(" · {left}% context left"));
            }
        }
        if let Some(thread) = self.thread {
            line.push_str(&format!(" · thread {thread}"));
        }
        line
    }

    /// The `/status` report, a setting per line. Before there is a thread, `in_use` holds what
    /// a new thread will ask for, and the rest is left to the server's configuration.
    pub fn report(&self) -> Vec<String> {
        let unknown = || match self.thread {
            Some(_) => "unknown (the server did not say)".to_owned(),
            None => "the server's configuration".to_owned(),
        };
        let in_use = self.in_use;
        let model = match (&in_use.model, &in_use.provider) {
            (Some(model), Some(provider)) => format!("{model} (provider {provider})"),
            (Some(model), None) => model.clone(),
            (None, _) => unknown(),
        };
        let effort = match (&in_use.effort, self.default_effort) {
            (Some(effort), _) => effort.clone(),
            (None, Some(default)) => format!("{default} (the model's default)"),
            (None, None) => "the model's default".to_owned(),
        };
        let or_unknown = |value: &Option<String>| value.clone().unwrap_or_else(unknown);
        let mut lines = vec![
            format!("thread     {}", self.thread.unwrap_or("none yet")),
            format!("model      {model}"),
            format!("effort     {effort}"),
            format!("cwd        {}", or_unknown(&in_use.cwd)),
            format!("approvals  {}", or_unknown(&in_use.approval)),
            format!("sandbox    {}", or_unknown(&in_use.sandbox)),
        ];
        match self.usage {
            None => lines.push("tokens     none used yet".to_owned()),
            Some(usage) => {
                let total = &usage.total;
                lines.push(format!(
                    "tokens     {} in this thread: {} input ({} cached), {} output ({} reasoning)",
                    total.total_tokens,
                    total.input_tokens,
                    total.cached_input_tokens,
                    total.output_tokens,
                    total.reasoning_output_tokens
                ));
                let last = usage.last.total_tokens;
                lines.push(match (usage.model_context_window, context_left(usage)) {
                    (Some(window), Some(left)) => format!(
                        "context    {last} of {window} tokens used by the last model call \
                         ({left}% left)"
                    ),
                    _ => format!("context    {last} tokens used by the last model call"),
                });
            }
        }
        lines
    }
}

/// The share of the context window the last model call left free, in percent.
fn context_left(usage: &ThreadTokenUsage) -> Option<i64> {
    let window = usage.model_context_window.filter(|w| *w > 0)?;
    let used = usage.last.total_tokens.clamp(0, window);
    Some((window - used) * 100 / window)
}

/// A duration as the status line shows it: `7s`, `2m 05s`, `1h 03m`.
pub fn elapsed(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3600, seconds / 60 % 60),
    }
}

/// A token count in a few characters: `950`, `12.3k`, `4.1M`.
fn count(tokens: i64) -> String {
    match tokens {
        ..10_000 => tokens.to_string(),
        10_000..1_000_000 => format!("{:.1}k", tokens as f64 / 1_000.0),
        _ => format!("{:.1}M", tokens as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn usage(total: i64, last: i64, window: Option<i64>) -> ThreadTokenUsage {
        let breakdown = |n: i64| {
            json!({"inputTokens": n - 10, "cachedInputTokens": 5, "outputTokens": 10,
                   "reasoningOutputTokens": 2, "totalTokens": n})
        };
        serde_json::from_value(json!({
            "total": breakdown(total), "last": breakdown(last), "modelContextWindow": window,
        }))
        .expect("a token usage")
    }

    #[test]
    fn the_line_names_the_model_and_effort_in_use_and_times_the_turn() {
        let in_use = InUse {
            model: Some("qwen3-coder".into()),
            effort: Some("high".into()),
            ..InUse::default()
        };
        let usage = usage(12_345, 2_000, Some(10_000));
        let status = Status {
            thread: Some("t-1"),
            in_use: &in_use,
            default_effort: Some("medium"),
            activity: Activity::Working(Duration::from_secs(75)),
            usage: Some(&usage),
        };
        assert_eq!(
            status.line(),
            " qwen3-coder · effort high · working 1m 15s · 12.3k tokens · 80% context left · thread t-1"
        );

        // No effort chosen: the model's default, from model/list, when known.
        let in_use = InUse {
            model: Some("fixture".into()),
            ..InUse::default()
        };
        let waiting = Status {
            thread: None,
            in_use: &in_use,
            default_effort: Some("medium"),
            activity: Activity::WaitingForApproval(Duration::from_secs(3)),
            usage: None,
        };
        assert_eq!(
            waiting.line(),
            " fixture · effort medium · waiting for your approval (3s)"
        );
        let unknown = Status {
            default_effort: None,
            activity: Activity::Ready,
            ..waiting
        };
        assert_eq!(unknown.line(), " fixture · effort default · ready");
    }

    #[test]
    fn the_report_lists_every_setting_and_the_token_breakdown() {
        let in_use = InUse {
            model: Some("fixture".into()),
            provider: Some("fixture".into()),
            cwd: Some("/w".into()),
            approval: Some("never".into()),
            sandbox: Some("read-only".into()),
            ..InUse::default()
        };
        let usage = usage(100, 40, Some(200));
        let status = Status {
            thread: Some("t-1"),
            in_use: &in_use,
            default_effort: Some("low"),
            activity: Activity::Ready,
            usage: Some(&usage),
        };
        assert_eq!(
            status.report(),
            [
                "thread     t-1",
                "model      fixture (provider fixture)",
                "effort     low (the model's default)",
                "cwd        /w",
                "approvals  never",
                "sandbox    read-only",
                "tokens     100 in this thread: 90 input (5 cached), 10 output (2 reasoning)",
                "context    40 of 200 tokens used by the last model call (80% left)",
            ]
        );
        let bare = Status {
            thread: None,
            in_use: &InUse::default(),
            default_effort: None,
            activity: Activity::Ready,
            usage: None,
        };
        let report = bare.report();
        assert_eq!(report[0], "thread     none yet");
        assert_eq!(report[1], "model      the server's configuration");
        assert_eq!(report[6], "tokens     none used yet");
        let said_nothing = Status {
            thread: Some("t-2"),
            ..bare
        };
        assert_eq!(
            said_nothing.report()[1],
            "model      unknown (the server did not say)"
        );
    }

    #[test]
    fn durations_and_counts_stay_short() {
        assert_eq!(elapsed(Duration::from_millis(999)), "0s");
        assert_eq!(elapsed(Duration::from_secs(59)), "59s");
        assert_eq!(elapsed(Duration::from_secs(60)), "1m 00s");
        assert_eq!(elapsed(Duration::from_secs(3_725)), "1h 02m");
        assert_eq!(count(9_999), "9999");
        assert_eq!(count(1_234_567), "1.2M");
    }
}
