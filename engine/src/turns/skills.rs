//! Skills offered to the model (see `crate::skills` for where they are found).
//!
//! Every model call of a turn carries, after the developer instructions, a developer message
//! that lists the enabled skills of the thread's working directory (name, description and the
//! path of its `SKILL.md`) within [`LIST_BUDGET`] bytes; a disabled skill is never listed. When
//! the user's input names a skill (a `skill` input part), the text of that skill's `SKILL.md`
//! follows the input as context, so the model has it without reading the file. Only a skill
//! that is found and enabled is read that way: a `skill` part naming any other file adds
//! nothing.

use std::path::{Path, PathBuf};

use agentwire_protocol::{SkillMetadata, UserInput};

/// What opens the skills message.
pub(crate) const LIST_OPEN: &str = "<skills_instructions>";
/// What closes it.
const LIST_CLOSE: &str = "</skills_instructions>";
/// Most bytes of skill entries in the list; the skills past it are only counted.
pub(crate) const LIST_BUDGET: usize = 8 * 1024;
/// Most bytes of one mentioned skill's `SKILL.md` given to the model.
const MENTION_MAX_BYTES: u64 = 64 * 1024;

/// The skills message for `skills` (enabled ones only, in order), or `None` when none is
/// enabled.
pub(crate) fn model_list(skills: &[SkillMetadata]) -> Option<String> {
    let enabled: Vec<&SkillMetadata> = skills.iter().filter(|s| s.enabled).collect();
    if enabled.is_empty() {
        return None;
    }
    let mut text = format!(
        "{LIST_OPEN}\n## Skills\n\
         A skill is a folder of instructions for one kind of task, described by its SKILL.md. \
         When a task fits a skill's description, or the user names a skill, read that \
         SKILL.md first (with the shell) and follow it; open the other files of the skill's \
         folder only when its SKILL.md points to them. Do not read a skill the task does \
         not need.\n### Skills you can use\n"
    );
    let mut used = 0;
    let mut left_out = 0;
    for skill in enabled {
        let line = format!(
            "- {}: {} (SKILL.md: {})\n",
            skill.name, skill.description, skill.path.0
        );
        if used + line.len() > LIST_BUDGET {
            left_out += 1;
            continue;
        }
        used += line.len();
        text.push_str(&line);
    }
    if left_out > 0 {
        text.push_str(&format!(
            "({left_out} more skills are installed but not listed here.)\n"
        ));
    }
    text.push_str(LIST_CLOSE);
    Some(text)
}

/// The context blocks for the skills `input` names: for each `skill` part that names a found,
/// enabled skill (by the path of its `SKILL.md`, or else by its name), that file's text.
/// Reads the disk: call it off the async workers.
pub(crate) fn mentioned(input: &[UserInput], skills: &[SkillMetadata]) -> Vec<String> {
    let mut blocks = Vec::new();
    for part in input {
        let UserInput::Skill { name, path, .. } = part else {
            continue;
        };
        let wanted = agentwire_config::layers::absolute(path)
            .display()
            .to_string();
        let found = skills
            .iter()
            .filter(|s| s.enabled)
            .find(|s| s.path.0 == wanted)
            .or_else(|| {
                skills
                    .iter()
                    .filter(|s| s.enabled)
                    .find(|s| &s.name == name)
            });
        let Some(skill) = found else {
            continue;
        };
        let Ok((bytes, _)) = agentwire_support::regular_file::read_regular(
            Path::new(&skill.path.0),
            MENTION_MAX_BYTES,
        ) else {
            continue;
        };
        let body = String::from_utf8_lossy(&bytes);
        blocks.push(format!(
            "<skill>\n<name>{}</name>\n<path>{}</path>\n{}\n</skill>",
            skill.name,
            skill.path.0,
            body.trim_end()
        ));
    }
    blocks
}

impl super::Turns {
    /// Lets turns offer the skills of `skills` (`home` is `$AGENTWIRE_HOME`).
    pub(crate) fn set_skills(&self, skills: std::sync::Arc<crate::skills::Skills>, home: PathBuf) {
        let _ = self.skills.set((skills, home));
    }

    /// The skills of `cwd`, each enabled or not as the user's `config.toml` says (none before
    /// [`Self::set_skills`]). Reads the disk: call it off the async workers.
    pub(crate) fn skills_of(&self, cwd: &str) -> Vec<SkillMetadata> {
        let Some((skills, home)) = self.skills.get() else {
            return Vec::new();
        };
        let user = agentwire_config::layers::read_file(self.config.user_path());
        let settings = crate::skills::settings_of(&user.table);
        skills.cached(home, cwd, &settings, false).skills
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_protocol::{LegacyAppPathString, SkillScope};

    fn skill(name: &str, enabled: bool) -> SkillMetadata {
        SkillMetadata::builder()
            .description(format!("Does {name}."))
            .enabled(enabled)
            .name(name)
            .path(LegacyAppPathString(format!("/s/{name}/SKILL.md")))
            .scope(SkillScope::User)
            .build()
    }

    #[test]
    fn only_enabled_skills_are_listed_and_the_budget_counts_the_rest() {
        let list = model_list(&[skill("pdf", true), skill("off", false)]).expect("a list");
        assert!(
            list.contains("- pdf: Does pdf. (SKILL.md: /s/pdf/SKILL.md)"),
            "{list}"
        );
        assert!(!list.contains("off"), "{list}");
        assert!(model_list(&[skill("off", false)]).is_none());
        let many: Vec<SkillMetadata> = (0..400).map(|i| skill(&format!("s{i}"), true)).collect();
        let list = model_list(&many).expect("a list");
        assert!(
            list.contains("more skills are installed but not listed"),
            "{list}"
        );
        assert!(list.len() < LIST_BUDGET + 1024);
    }
}
