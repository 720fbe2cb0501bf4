//! The skills a turn offers the model (see [`crate::turns::skills`]): the list message after
//! the developer instructions, and the `SKILL.md` of each skill the user's input names, after
//! that input.

use agentwire_protocol::{SkillMetadata, UserInput};
use agentwire_providers::HistoryEntry;

use super::TurnRun;
use crate::turns::skills::{mentioned, model_list};

impl TurnRun {
    /// The skills of the thread's working directory (read on the blocking pool; found skills
    /// are cached by `crate::skills::Skills`).
    async fn skills(&self) -> Vec<SkillMetadata> {
        let turns = self.turns.clone();
        let cwd = self.settings.cwd.clone();
        tokio::task::spawn_blocking(move || turns.skills_of(&cwd))
            .await
            .unwrap_or_default()
    }

    /// Adds the list of enabled skills to what every model call of the turn sees first, right
    /// after the developer instructions.
    pub(super) async fn offer_skills(&mut self) {
        let Some(list) = model_list(&self.skills().await) else {
            return;
        };
        let at = self
            .context
            .iter()
            .take_while(|e| matches!(e, HistoryEntry::Developer { .. }))
            .count();
        self.context
            .insert(at, HistoryEntry::Developer { text: list });
    }

    /// Adds the `SKILL.md` of each skill `input` names to the conversation.
    pub(super) async fn skill_mentions(&mut self, input: &[UserInput]) {
        if !input.iter().any(|p| matches!(p, UserInput::Skill { .. })) {
            return;
        }
        let skills = self.skills().await;
        let input = input.to_vec();
        let blocks = tokio::task::spawn_blocking(move || mentioned(&input, &skills))
            .await
            .unwrap_or_default();
        for text in blocks {
            self.history.push(HistoryEntry::Context { text });
        }
    }
}
