//! Which commands are known to only read, so the `untrusted` approval policy runs them without
//! asking: an allowlist of programs, each with the exact options and number of operands with
//! which it cannot write, run another program or change the system's state. Anything not on
//! the list (an option nobody listed, a path to a program, a second operand that is an output
//! file, shell syntax beyond one simple command) asks.

use super::actions::words;

/// How many operands (non-option words) a program may take.
#[derive(Debug, Clone, Copy)]
enum Operands {
    /// Any number.
    Any,
    /// At most this many (`uniq IN OUT` writes OUT, so `uniq` takes one).
    AtMost(usize),
    /// One `+FORMAT` at most (`date`: any other operand sets the clock).
    DateFormat,
}

/// The options and operands with which a program is known to only read. Options not listed
/// make the command unknown, so an option that writes, runs a program or changes state
/// (`sort -o`, `file -C`, `date -s`, `rg --pre`, `tree -o`, `find -exec` …) is never "safe"
/// just because nobody thought to forbid it.
#[derive(Debug, Clone, Copy)]
struct Spec {
    program: &'static str,
    /// Options without a value; the one-letter ones may be bundled (`-la`).
    switches: &'static [&'static str],
    /// Options that take a value (`-n 5`, `-n5`, `--lines=5`, `--lines 5`).
    valued: &'static [&'static str],
    operands: Operands,
}

const fn spec(
    program: &'static str,
    switches: &'static [&'static str],
    valued: &'static [&'static str],
    operands: Operands,
) -> Spec {
    Spec {
        program,
        switches,
        valued,
        operands,
    }
}

/// The read-only programs and how they may be called. `git` is not among them: any git
/// command reads the repository's own configuration, which can run programs
/// (`core.fsmonitor`, `diff.external`, textconv drivers), so none is known to only read.
const READ_ONLY: &[Spec] = &[
    spec(
        "cat",
        &[
            "-n", "-b", "-s", "-A", "-E", "-T", "-v", "-e", "-t", "--number",
        ],
        &[],
        Operands::Any,
    ),
    spec(
        "head",
        &["-q", "-v"],
        &["-n", "-c", "--lines", "--bytes"],
        Operands::Any,
    ),
    spec(
        "tail",
        &["-q", "-v"],
        &["-n", "-c", "--lines", "--bytes"],
        Operands::Any,
    ),
    spec(
        "ls",
        &[
            "-a",
            "-A",
            "-l",
            "-h",
            "-R",
            "-r",
            "-t",
            "-S",
            "-1",
            "-d",
            "-F",
            "-i",
            "-p",
            "-n",
            "-G",
            "-X",
            "-U",
            "--all",
            "--almost-all",
            "--human-readable",
            "--recursive",
            "--reverse",
            "--directory",
            "--classify",
        ],
        &[],
        Operands::Any,
    ),
    spec("pwd", &["-L", "-P"], &[], Operands::AtMost(0)),
    spec("echo", &["-n", "-e", "-E"], &[], Operands::Any),
    spec("true", &[], &[], Operands::Any),
    spec("false", &[], &[], Operands::Any),
    spec("which", &["-a"], &[], Operands::Any),
    spec("whoami", &[], &[], Operands::AtMost(0)),
    spec(
        "date",
        &["-u", "-R", "--utc", "--rfc-email"],
        &["-d", "--date", "-I", "--iso-8601", "--rfc-3339"],
        Operands::DateFormat,
    ),
    spec(
        "uname",
        &["-a", "-s", "-n", "-r", "-v", "-m", "-p", "-i", "-o"],
        &[],
        Operands::AtMost(0),
    ),
    spec(
        "stat",
        &["-L", "-t", "--dereference", "--terse"],
        &["-c", "--format", "--printf"],
        Operands::Any,
    ),
    spec(
        "file",
        &[
            "-b",
            "-i",
            "-L",
            "-h",
            "-z",
            "--brief",
            "--mime",
            "--mime-type",
            "--mime-encoding",
            "--dereference",
        ],
        &[],
        Operands::Any,
    ),
    spec(
        "tree",
        &["-a", "-d", "-f", "-i", "-F", "--noreport"],
        &["-L", "-I", "-P"],
        Operands::Any,
    ),
    spec(
        "nl",
        &[],
        &["-b", "-n", "-w", "-s", "-v", "-i"],
        Operands::Any,
    ),
    spec(
        "wc",
        &[
            "-l", "-w", "-c", "-m", "-L", "--lines", "--words", "--bytes", "--chars",
        ],
        &[],
        Operands::Any,
    ),
    spec(
        "cut",
        &["-s", "--complement"],
        &["-d", "-f", "-c", "-b", "--delimiter", "--fields"],
        Operands::Any,
    ),
    spec(
        "sort",
        &[
            "-r",
            "-n",
            "-u",
            "-f",
            "-b",
            "-h",
            "-V",
            "-s",
            "-g",
            "-M",
            "-c",
            "--reverse",
            "--numeric-sort",
            "--unique",
        ],
        &["-k", "-t", "--key", "--field-separator"],
        Operands::Any,
    ),
    spec(
        "uniq",
        &[
            "-c",
            "-d",
            "-u",
            "-i",
            "--count",
            "--repeated",
            "--unique",
            "--ignore-case",
        ],
        &["-f", "-s", "-w"],
        Operands::AtMost(1),
    ),
    spec(
        "diff",
        &[
            "-u",
            "-r",
            "-N",
            "-q",
            "-w",
            "-b",
            "-B",
            "-i",
            "-y",
            "--brief",
            "--recursive",
            "--new-file",
            "--side-by-side",
            "--ignore-all-space",
        ],
        &["-U", "--unified"],
        Operands::AtMost(2),
    ),
    spec(
        "grep",
        &[
            "-i",
            "-v",
            "-w",
            "-x",
            "-c",
            "-l",
            "-L",
            "-n",
            "-h",
            "-H",
            "-o",
            "-q",
            "-s",
            "-r",
            "-R",
            "-E",
            "-F",
            "-G",
            "-P",
            "-z",
            "-a",
            "-I",
            "--ignore-case",
            "--invert-match",
            "--word-regexp",
            "--line-regexp",
            "--count",
            "--files-with-matches",
            "--files-without-match",
            "--line-number",
            "--recursive",
            "--fixed-strings",
            "--extended-regexp",
            "--only-matching",
            "--quiet",
        ],
        &[
            "-e",
            "-f",
            "-A",
            "-B",
            "-C",
            "-m",
            "--regexp",
            "--include",
            "--exclude",
            "--exclude-dir",
            "--max-count",
            "--context",
        ],
        Operands::Any,
    ),
    spec(
        "rg",
        &[
            "-i",
            "-S",
            "-s",
            "-v",
            "-w",
            "-x",
            "-c",
            "-l",
            "-n",
            "-N",
            "-H",
            "-o",
            "-q",
            "-u",
            "-F",
            "-U",
            "--hidden",
            "--no-ignore",
            "--files",
            "--ignore-case",
            "--smart-case",
            "--case-sensitive",
            "--invert-match",
            "--word-regexp",
            "--count",
            "--files-with-matches",
            "--line-number",
            "--no-line-number",
            "--only-matching",
            "--fixed-strings",
            "--multiline",
            "--json",
            "--no-heading",
            "--vimgrep",
        ],
        &[
            "-e",
            "-g",
            "-t",
            "-T",
            "-A",
            "-B",
            "-C",
            "-m",
            "--regexp",
            "--glob",
            "--type",
            "--type-not",
            "--max-count",
            "--context",
            "--max-depth",
        ],
        Operands::Any,
    ),
];

/// `find` predicates that only select or print (never `-exec`, `-ok`, `-delete`, `-fprint`,
/// `-fls` …): the ones that take a value, and the ones that do not.
const FIND_VALUED: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-type",
    "-maxdepth",
    "-mindepth",
    "-size",
    "-mtime",
    "-mmin",
    "-newer",
    "-regex",
    "-iregex",
    "-user",
    "-group",
    "-perm",
];
const FIND_SWITCHES: &[&str] = &[
    "-print",
    "-print0",
    "-prune",
    "-and",
    "-or",
    "-a",
    "-o",
    "-not",
    "-empty",
    "-depth",
    "-L",
    "-H",
    "-P",
    "-follow",
    "-xdev",
    "-readable",
];

/// Whether `argv` is known to only read: one simple command of a program in `READ_ONLY`
/// (or `find` with read-only predicates), called by its bare name with only the options listed
/// for it and no more operands than it takes. Anything else asks under `untrusted`.
pub fn is_known_safe(argv: &[String]) -> bool {
    let Some(words) = words(argv) else {
        return false;
    };
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    // A path to a program (`/tmp/x/cat`, `./ls`) could be anything: only bare names are known.
    if program == "find" {
        return find_only_reads(args);
    }
    READ_ONLY
        .iter()
        .find(|spec| spec.program == program)
        .is_some_and(|spec| spec.allows(args))
}

impl Spec {
    /// Whether `args` use only the listed options and an allowed number of operands.
    fn allows(&self, args: &[String]) -> bool {
        let mut operands = Vec::new();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            if arg == "--" {
                operands.extend(rest.by_ref());
                break;
            }
            if arg.starts_with("--") {
                if self.switches.contains(&arg.as_str()) {
                    continue;
                }
                let (name, value) = match arg.split_once('=') {
                    Some((name, value)) => (name, Some(value)),
                    None => (arg.as_str(), None),
                };
                if !self.valued.contains(&name) || (value.is_none() && rest.next().is_none()) {
                    return false;
                }
                continue;
            }
            let Some(bundle) = arg.strip_prefix('-').filter(|b| !b.is_empty()) else {
                operands.push(arg);
                continue;
            };
            // `head -5`, `tail -20`: a count.
            if matches!(self.program, "head" | "tail") && bundle.bytes().all(|b| b.is_ascii_digit())
            {
                continue;
            }
            if !self.allows_bundle(bundle, &mut rest) {
                return false;
            }
        }
        match self.operands {
            Operands::Any => true,
            Operands::AtMost(most) => operands.len() <= most,
            Operands::DateFormat => match operands.as_slice() {
                [] => true,
                [format] => format.starts_with('+'),
                _ => false,
            },
        }
    }

    /// Whether the one-letter options `bundle` (`la` of `-la`) are all listed; a valued one
    /// takes the rest of the word, or the next word, as its value.
    fn allows_bundle<'a>(&self, bundle: &str, rest: &mut impl Iterator<Item = &'a String>) -> bool {
        for (at, letter) in bundle.char_indices() {
            let option = format!("-{letter}");
            if self.switches.contains(&option.as_str()) {
                continue;
            }
            if !self.valued.contains(&option.as_str()) {
                return false;
            }
            let value_follows = at + letter.len_utf8() < bundle.len();
            return value_follows || rest.next().is_some();
        }
        true
    }
}

/// Whether a `find` command line only selects and prints.
fn find_only_reads(args: &[String]) -> bool {
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if !arg.starts_with('-') || FIND_SWITCHES.contains(&arg.as_str()) {
            continue; // a starting point, or a predicate without a value
        }
        if !FIND_VALUED.contains(&arg.as_str()) || rest.next().is_none() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Vec<String> {
        vec!["bash".to_owned(), "-c".to_owned(), text.to_owned()]
    }

    #[test]
    fn only_simple_read_only_commands_are_known_safe() {
        for safe in [
            "ls -la src",
            "ls",
            "cat -n a.txt b.txt",
            "head -n 20 a.rs",
            "head -5 a.rs",
            "tail -n5 log",
            "wc -l src/lib.rs",
            "grep -rn needle src",
            "grep -e -o src",
            "rg -n --hidden needle",
            "rg --glob=src needle",
            "sort -rn counts",
            "sort -k 2 -t , data.csv",
            "uniq -c sorted.txt",
            "date",
            "date -u +%s",
            "file -b a.bin",
            "find . -name x.rs -type f -print",
            "find src -maxdepth 2 -o -name y",
            "diff -u a b",
            "tree -L 2 src",
            "pwd",
            "echo hello",
            "uname -a",
            "stat -c %s a",
        ] {
            assert!(is_known_safe(&line(safe)), "{safe} should be known safe");
        }
        assert!(is_known_safe(&["cat".to_owned(), "a.txt".to_owned()]));
    }

    /// Forms of the listed programs that write, run something or change state, and shell
    /// syntax that makes more than one command: each must ask.
    #[test]
    fn hostile_forms_are_never_known_safe() {
        for hostile in [
            // Writers hiding behind a reader's name.
            "uniq in.txt out.txt",
            "sort -o out in",
            "sort -uo F in",
            "sort --output=F in",
            "sort --compress-program=sh in",
            "sort -T /tmp/x in",
            "file -C -m magic",
            "file -Cm magic",
            "date -s 2020-01-01",
            "date --set=2020-01-01",
            "date 010100002020",
            "tree -o out.txt",
            "find . -delete",
            "find . -exec rm {} +",
            "find . -execdir sh -c x +",
            "find . -ok rm",
            "find . -fprint out",
            "find . -fprintf out x",
            "find . -fls out",
            "find . -name",
            "rg --pre=sh x",
            "rg --pre sh x",
            "rg -z x",
            "rg --search-zip x",
            "rg --hostname-bin=sh x",
            "diff --output=x a b",
            "diff a b c",
            "tail -f log",
            "head -n",
            // git reads repository config that can run programs.
            "git status",
            "git log",
            "git diff --output=x",
            "git -c core.fsmonitor=x status",
            "git push",
            // Not on the list at all, or not a bare program name.
            "rm x",
            "make",
            "/tmp/evil/cat a",
            "./ls",
            "env ls",
            "xargs ls",
            // More than one simple command.
            "ls; rm -rf x",
            "cat a > b",
            "cat a | sh",
            "echo $(rm x)",
            "echo `rm x`",
            "ls && rm x",
            "ls\nrm x",
            "",
        ] {
            assert!(
                !is_known_safe(&line(hostile)),
                "{hostile:?} must not be known safe"
            );
        }
        assert!(!is_known_safe(&[
            "sort".to_owned(),
            "-o".to_owned(),
            "out".to_owned()
        ]));
        assert!(!is_known_safe(&[]));
    }
}
