//! The `view_image` and `web_search` tool calls of a turn.
//!
//! `view_image` checks the file under the rules of a `localImage` input (opened without
//! blocking, a regular file, at most 20 MiB, a PNG, JPEG, GIF or WebP by its content), makes an
//! `imageView` item, and attaches the image to the model's next input as a user message after
//! the results of the call's tools (the image is read again for each model call, as a
//! `localImage` is). `web_search` asks the endpoint of `[tools.web_search]` and makes a
//! `webSearch` item; without an endpoint the call is refused (the tool is not offered then).

use std::path::Path;

use agentwire_protocol::{LegacyAppPathString, ThreadItemKind, UserInput, WebSearchAction};
use agentwire_providers::HistoryEntry;
use agentwire_tools::{VIEW_IMAGE, WEB_SEARCH, web_search};
use serde_json::json;

use super::{TurnRun, now_ms};

impl TurnRun {
    /// A `view_image` call: the result for the model, and the image's absolute path when it is
    /// attached.
    pub(super) async fn view_image(&mut self, path: &str) -> (String, Option<String>) {
        let cwd = Path::new(&self.settings.cwd);
        let absolute = std::path::absolute(cwd.join(path))
            .unwrap_or_else(|_| cwd.join(path))
            .to_string_lossy()
            .into_owned();
        let input = [UserInput::local_image().path(absolute.clone()).build()];
        // `check_input` reads the file's first bytes on a thread of its own, with a deadline.
        let checked =
            tokio::task::spawn_blocking(move || agentwire_providers::content::check_input(&input))
                .await
                .unwrap_or_else(|join| Err(format!("the check stopped unexpectedly ({join})")));
        if let Err(error) = checked {
            let reason = error.trim_start_matches("input[0].path: ");
            return (format!("`{VIEW_IMAGE}` failed: {reason}"), None);
        }
        let id = agentwire_store::meta::new_id();
        let started_ms = now_ms();
        let kind = ThreadItemKind::image_view()
            .id(id)
            .path(LegacyAppPathString(absolute.clone()))
            .build();
        self.started(kind.clone(), started_ms);
        self.complete(kind, started_ms).await;
        (
            format!("The image {absolute} is attached to your next input."),
            Some(absolute),
        )
    }

    /// Adds the images `view_image` attached, as one user message (after the tool results).
    pub(super) fn attach_images(&mut self, images: Vec<String>) {
        if images.is_empty() {
            return;
        }
        let mut content = Vec::with_capacity(images.len() + 1);
        content.push(
            UserInput::text()
                .text(format!(
                    "The image{} you asked to view with `{VIEW_IMAGE}`:",
                    if images.len() == 1 { "" } else { "s" }
                ))
                .build(),
        );
        content.extend(
            images
                .into_iter()
                .map(|path| UserInput::local_image().path(path).build()),
        );
        self.history.push(HistoryEntry::User { content });
    }

    /// A `web_search` call: the results for the model, or why there are none.
    pub(super) async fn web_search(&mut self, query: &str) -> String {
        let endpoint = self
            .turns
            .config
            .effective(None)
            .file
            .tools
            .web_search_endpoint
            .clone();
        let Some(endpoint) = endpoint else {
            return format!(
                "`{WEB_SEARCH}` is not available: no search endpoint is configured \
                 ([tools.web_search] endpoint in config.toml)."
            );
        };
        let id = agentwire_store::meta::new_id();
        let started_ms = now_ms();
        self.started(
            ThreadItemKind::web_search()
                .id(id.clone())
                .query(query.to_owned())
                .build(),
            started_ms,
        );
        let found = self
            .unless_interrupted(web_search::search(&endpoint, query))
            .await
            .unwrap_or_else(|| Err("the search was interrupted".to_owned()));
        let (result, results) = match found {
            Ok(hits) => {
                let results = hits
                    .iter()
                    .map(|hit| json!({"title": hit.title, "url": hit.url, "snippet": hit.snippet}))
                    .collect();
                (web_search::render(query, &hits), Some(results))
            }
            Err(error) => (format!("The search failed: {error}"), None),
        };
        self.complete(
            ThreadItemKind::web_search()
                .id(id)
                .query(query.to_owned())
                .action(WebSearchAction::search().query(query.to_owned()).build())
                .maybe_results(results)
                .build(),
            started_ms,
        )
        .await;
        result
    }
}
