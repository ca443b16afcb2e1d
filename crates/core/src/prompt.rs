//! The system prompt: tandem's fixed base, then the environment.
//!
//! The blocks are ordered from most to least stable so the request prefix stays byte-identical across the
//! turns of a session (prompt caching): the base prompt never changes, the environment block only with the
//! day or the directory.

use std::path::Path;

use crate::provider::SystemBlock;

const BASE_PROMPT: &str = include_str!("../../../assets/system-prompt.md");

/// How the user shaped the system prompt (`--system-prompt`, `--append-system-prompt`).
#[derive(Clone, Debug, Default)]
pub struct PromptOptions {
    /// Replaces the base prompt.
    pub replace: Option<String>,
    /// Appended after everything else.
    pub append: Option<String>,
}

/// Builds the system blocks for a session in `cwd`; `today` is an ISO date.
pub fn system_blocks(options: &PromptOptions, cwd: &Path, today: &str) -> Vec<SystemBlock> {
    let base = options.replace.clone().unwrap_or_else(|| BASE_PROMPT.trim_end().to_owned());
    let is_git = cwd.ancestors().any(|dir| dir.join(".git").exists());
    let environment = format!(
        "# Environment\nWorking directory: {}\nIs a git repository: {}\nPlatform: {} ({})\nToday's date: {today}",
        cwd.display(),
        if is_git { "yes" } else { "no" },
        std::env::consts::OS,
        std::env::consts::ARCH,
    );
    let mut blocks = vec![SystemBlock { text: base, cache: false }, SystemBlock { text: environment, cache: false }];
    if let Some(extra) = options.append.as_ref().filter(|text| !text.is_empty()) {
        blocks.push(SystemBlock { text: extra.clone(), cache: false });
    }
    blocks.retain(|block| !block.text.is_empty());
    if let Some(last) = blocks.last_mut() {
        last.cache = true;
    }
    blocks
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0);
    let (year, month, day) = civil_date(secs);
    format!("{year:04}-{month:02}-{day:02}")
}

/// (year, month, day) in UTC of a unix time, without a date crate (Howard Hinnant's civil_from_days).
pub fn civil_date(secs: u64) -> (i64, i64, i64) {
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// What `/init` asks the model to do (the file is written through the normal Write permission).
pub const INIT_PROMPT: &str = "Please analyze this codebase and create a CLAUDE.md file in the repository root for future \
sessions of an AI coding assistant. Include: the commands to build, test (also a single test) and lint; the \
high-level architecture and where things live, only what needs reading several files to understand; and the \
project's conventions that are not obvious. Be concise; don't list every file or repeat generic advice. If a \
CLAUDE.md or AGENTS.md exists, improve it instead of starting over.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_then_environment_with_one_breakpoint_at_the_end() {
        let blocks = system_blocks(&PromptOptions::default(), Path::new("/tmp/x"), "2026-11-30");
        assert_eq!(blocks.len(), 2);
        assert!(blocks[0].text.contains("tandem"));
        assert!(blocks[1].text.contains("/tmp/x") && blocks[1].text.contains("2026-11-30"));
        assert_eq!(blocks.iter().filter(|block| block.cache).count(), 1);
    }

    #[test]
    fn replace_and_append() {
        let options =
            PromptOptions { replace: Some("Be terse.".into()), append: Some("Always answer in French.".into()) };
        let blocks = system_blocks(&options, Path::new("/"), "2026-01-01");
        assert_eq!(blocks[0].text, "Be terse.");
        assert_eq!(blocks.last().unwrap().text, "Always answer in French.");
        assert!(blocks.last().unwrap().cache);
        let empty = PromptOptions { replace: Some(String::new()), append: None };
        assert!(!system_blocks(&empty, Path::new("/"), "d").iter().any(|block| block.text.is_empty()));
    }

    #[test]
    fn dates_are_civil() {
        assert_eq!(today_utc().len(), 10);
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(951_782_400), (2000, 2, 29));
    }
}
