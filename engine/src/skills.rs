//! Skills: folders holding a `SKILL.md` whose YAML front matter names the skill and says when
//! to use it (`name`, `description`, optionally `metadata.short-description`); the rest of the
//! file is the instructions the agent reads when it uses the skill.
//!
//! Where skills are found, for a working directory, in this order:
//! - `user`: `$AGENTWIRE_HOME/skills/<skill>/SKILL.md`, then each extra root set by
//!   `skills/extraRoots/set` (for this server, until it stops);
//! - `user` too, for each enabled installed plugin (see `crate::plugins`): the skill folders
//!   of its copy (`skills/` unless its manifest names another), listed as `<plugin>:<skill>`
//!   with `pluginId` set;
//! - `repo`: `.agents/skills/<skill>/SKILL.md` and `.codex/skills/<skill>/SKILL.md` in each
//!   directory from the repository root (the nearest ancestor holding `.git`) down to the
//!   working directory;
//! - `admin`: `/etc/agentwire/skills/<skill>/SKILL.md`.
//!
//! A skill is enabled unless the user's `config.toml` disables it, as Codex writes it:
//!
//! ```toml
//! [[skills.config]]
//! path = "/home/me/.agentwire/skills/pdf/SKILL.md"
//! enabled = false
//! ```
//!
//! `skills/config/write` edits those entries. Each `SKILL.md` is read as any file the engine
//! opens for a client ([`agentwire_support::regular_file`]): never a FIFO or device, at most 64 KiB.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agentwire_config::layers::project_dirs;
use agentwire_protocol::{
    AbsolutePathBuf, LegacyAppPathString, SkillErrorInfo, SkillMetadata, SkillScope,
    SkillsListEntry,
};
use agentwire_support::lock;
use serde::Deserialize;

/// Largest `SKILL.md` read.
const MAX_SKILL_BYTES: u64 = 64 * 1024;
/// Longest skill name accepted (in characters).
const MAX_NAME_CHARS: usize = 64;
/// Longest description accepted (in characters).
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Most skill folders looked at under one root.
const MAX_SKILLS_PER_ROOT: usize = 256;
/// The skill file in each skill folder.
const SKILL_FILE: &str = "SKILL.md";
/// Where a repository keeps its skills, in each directory from its root down.
const REPO_FOLDERS: [&str; 2] = [".agents/skills", ".codex/skills"];
/// Where an administrator installs skills for every user.
const ADMIN_ROOT: &str = "/etc/agentwire/skills";

/// The skill roots of this server beyond the fixed ones, and what was found under the roots
/// of each working directory (read again only when those roots change, or on `skills/list`
/// with `forceReload`).
#[derive(Debug, Default)]
pub(crate) struct Skills {
    extra_roots: Mutex<Vec<PathBuf>>,
    /// Per working directory: the roots looked at, and what was found there.
    found: Mutex<HashMap<String, (Vec<Root>, SkillsListEntry)>>,
}

/// Most working directories whose skills are remembered.
const MAX_CACHED_CWDS: usize = 64;

/// A root to look for skill folders in: its path, scope and plugin.
type Root = (PathBuf, SkillScope, FromPlugin);

/// The plugin a skill root came with: its name and id (`None` for a root of its own).
type FromPlugin = Option<(String, String)>;

/// A `SKILL.md` front matter, as far as it is read.
#[derive(Debug, Deserialize)]
struct FrontMatter {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    metadata: Option<Metadata>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    #[serde(rename = "short-description")]
    short_description: Option<String>,
}

/// One `[[skills.config]]` entry of the user's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkillSetting {
    /// The `SKILL.md` it is about.
    pub path: String,
    /// Whether that skill is offered.
    pub enabled: bool,
}

impl Skills {
    /// Replaces the extra roots.
    pub(crate) fn set_extra_roots(&self, roots: Vec<PathBuf>) {
        *lock(&self.extra_roots) = roots;
    }

    /// [`Skills::list`], from what an earlier call found under the same roots, unless
    /// `reload` (or the roots changed: an extra root set, a plugin installed, another
    /// repository). Which skills are enabled is decided anew from `settings` every time.
    pub(crate) fn cached(
        &self,
        home: &Path,
        cwd: &str,
        settings: &[SkillSetting],
        reload: bool,
    ) -> SkillsListEntry {
        let roots = self.roots(home, cwd);
        let known = lock(&self.found)
            .get(cwd)
            .filter(|(seen, _)| !reload && *seen == roots)
            .map(|(_, entry)| entry.clone());
        let mut entry = match known {
            Some(entry) => entry,
            None => {
                let entry = scan(cwd, roots.clone(), settings);
                let mut found = lock(&self.found);
                if found.len() >= MAX_CACHED_CWDS && !found.contains_key(cwd) {
                    found.clear();
                }
                found.insert(cwd.to_owned(), (roots, entry.clone()));
                entry
            }
        };
        for skill in &mut entry.skills {
            skill.enabled = is_enabled(settings, &skill.path.0);
        }
        entry
    }

    /// The skills of `cwd`, with `settings` deciding which are enabled; `home` is
    /// `$AGENTWIRE_HOME`. Reads the disk: call it off the async workers.
    pub(crate) fn list(
        &self,
        home: &Path,
        cwd: &str,
        settings: &[SkillSetting],
    ) -> SkillsListEntry {
        scan(cwd, self.roots(home, cwd), settings)
    }

    /// The roots looked at for `cwd`, in order.
    fn roots(&self, home: &Path, cwd: &str) -> Vec<Root> {
        let extra = lock(&self.extra_roots).clone();
        let mut roots: Vec<(PathBuf, SkillScope, FromPlugin)> =
            vec![(home.join("skills"), SkillScope::User, None)];
        roots.extend(extra.into_iter().map(|r| (r, SkillScope::User, None)));
        roots.extend(
            crate::plugins::skill_roots(home)
                .into_iter()
                .map(|p| (p.root, SkillScope::User, Some((p.plugin_name, p.plugin_id)))),
        );
        for dir in project_dirs(Path::new(cwd)) {
            for folder in REPO_FOLDERS {
                roots.push((dir.join(folder), SkillScope::Repo, None));
            }
        }
        roots.push((PathBuf::from(ADMIN_ROOT), SkillScope::Admin, None));
        roots
    }
}

/// The skills found under `roots`, for `cwd`, `settings` deciding which are enabled.
fn scan(cwd: &str, roots: Vec<Root>, settings: &[SkillSetting]) -> SkillsListEntry {
    let mut skills = Vec::new();
    let mut errors = Vec::new();
    for (root, scope, plugin) in roots {
        for file in skill_files(&root) {
            match read_skill(&file) {
                Ok(front) => {
                    let path = file.display().to_string();
                    let enabled = is_enabled(settings, &path);
                    let (name, plugin_id) = match &plugin {
                        Some((plugin, id)) => {
                            (format!("{plugin}:{}", front.name), Some(id.clone()))
                        }
                        None => (front.name, None),
                    };
                    skills.push(
                        SkillMetadata::builder()
                            .description(front.description)
                            .enabled(enabled)
                            .name(name)
                            .path(LegacyAppPathString(path))
                            .maybe_plugin_id(plugin_id)
                            .scope(scope)
                            .maybe_short_description(front.short_description)
                            .build(),
                    );
                }
                Err(message) => errors.push(
                    SkillErrorInfo::builder()
                        .message(message)
                        .path(file.display().to_string())
                        .build(),
                ),
            }
        }
    }
    SkillsListEntry::builder()
        .cwd(cwd)
        .errors(errors)
        .skills(skills)
        .build()
}

/// Whether the skill file `path` is enabled: the last `[[skills.config]]` entry for it
/// decides; enabled when none is.
pub(crate) fn is_enabled(settings: &[SkillSetting], path: &str) -> bool {
    settings
        .iter()
        .rev()
        .find(|s| s.path == path)
        .is_none_or(|s| s.enabled)
}

/// A skill as read from its file.
#[derive(Debug, PartialEq)]
pub(crate) struct ReadSkill {
    pub name: String,
    pub description: String,
    pub short_description: Option<String>,
}

/// The `SKILL.md` files of the skill folders directly under `root`, sorted by folder name; none
/// when `root` does not exist.
pub(crate) fn skill_files(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink()))
        .map(|e| e.path().join(SKILL_FILE))
        .filter(|f| f.exists())
        .take(MAX_SKILLS_PER_ROOT)
        .collect();
    files.sort();
    files
}

/// Reads and checks one `SKILL.md`; the error says what is wrong with it.
pub(crate) fn read_skill(file: &Path) -> Result<ReadSkill, String> {
    let (bytes, longer) = agentwire_support::regular_file::read_regular(file, MAX_SKILL_BYTES)
        .map_err(|reason| format!("cannot read it: {reason}"))?;
    if longer {
        return Err(format!("larger than {MAX_SKILL_BYTES} bytes"));
    }
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned())?;
    parse_skill(&text)
}

/// Parses a `SKILL.md`'s front matter (a YAML block between `---` lines at the top).
pub(crate) fn parse_skill(text: &str) -> Result<ReadSkill, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("no front matter: the file must begin with a `---` line".to_owned());
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
        yaml.push('\n');
    }
    if !closed {
        return Err("the front matter has no closing `---` line".to_owned());
    }
    let front: FrontMatter = serde_yaml_ng::from_str(&yaml)
        .map_err(|e| format!("front matter is not valid YAML: {e}"))?;
    let name = single_line(front.name, "name")?;
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("name: longer than {MAX_NAME_CHARS} characters"));
    }
    let description = single_line(front.description, "description")?;
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "description: longer than {MAX_DESCRIPTION_CHARS} characters"
        ));
    }
    let short_description = front
        .metadata
        .and_then(|m| m.short_description)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    Ok(ReadSkill {
        name,
        description,
        short_description,
    })
}

/// `value` trimmed, required and on one line.
fn single_line(value: Option<String>, key: &str) -> Result<String, String> {
    let value = value
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("{key}: missing from the front matter"))?;
    if value.contains('\n') {
        return Err(format!("{key}: must be one line"));
    }
    Ok(value)
}

/// The `[[skills.config]]` entries of a configuration table (entries without a `path` or an
/// `enabled` boolean are skipped).
pub(crate) fn settings_of(table: &toml::Table) -> Vec<SkillSetting> {
    table
        .get("skills")
        .and_then(|s| s.get("config"))
        .and_then(toml::Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| {
                    Some(SkillSetting {
                        path: e.get("path")?.as_str()?.to_owned(),
                        enabled: e.get("enabled")?.as_bool()?,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The path a client named a skill by, made absolute.
pub(crate) fn skill_path(path: &AbsolutePathBuf) -> String {
    agentwire_config::layers::absolute(&path.0)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_gives_the_name_the_description_and_the_short_description() {
        let skill = parse_skill(
            "---\nname: pdf\ndescription: \"Read and fill PDF forms\"\nmetadata:\n  short-description: PDFs\n---\n# Body\n",
        )
        .expect("parses");
        assert_eq!(
            skill,
            ReadSkill {
                name: "pdf".into(),
                description: "Read and fill PDF forms".into(),
                short_description: Some("PDFs".into()),
            }
        );
    }

    #[test]
    fn a_skill_file_without_front_matter_or_a_name_says_what_is_missing() {
        assert!(
            parse_skill("# just markdown\n")
                .expect_err("refused")
                .contains("front matter")
        );
        assert!(
            parse_skill("---\nname: x\n")
                .expect_err("refused")
                .contains("closing")
        );
        assert!(
            parse_skill("---\ndescription: d\n---\n")
                .expect_err("refused")
                .contains("name: missing")
        );
        assert!(
            parse_skill("---\nname: [unclosed\n---\n")
                .expect_err("refused")
                .contains("not valid YAML")
        );
    }

    #[test]
    fn the_last_setting_for_a_path_decides() {
        let table: toml::Table = toml::from_str(
            "[[skills.config]]\npath = \"/a/SKILL.md\"\nenabled = false\n[[skills.config]]\npath = \"/b\"\n",
        )
        .expect("toml");
        assert_eq!(
            settings_of(&table),
            vec![SkillSetting {
                path: "/a/SKILL.md".into(),
                enabled: false
            }]
        );
    }
}
