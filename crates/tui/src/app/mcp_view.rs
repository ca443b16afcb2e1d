//! MCP servers in the app: the `.mcp.json` approval dialog (Claude Code's three answers, asked once per server
//! and remembered), the `/mcp` list with each server's status and tools (`r` reconnects), and the servers'
//! prompts offered as `/mcp__server__prompt` commands.

use std::collections::{HashSet, VecDeque};

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use tandem_protocol::{McpChoice, McpRequest, McpServerView, Op};

use super::editor::SlashCommand;
use super::{App, Effect};

/// The app's view of the session's servers.
#[derive(Clone, Debug, Default)]
pub struct McpState {
    /// The latest list from core.
    pub servers: Vec<McpServerView>,
    /// `.mcp.json` servers to ask about, the front one on screen.
    pub approvals: VecDeque<String>,
    /// The highlighted answer of the approval dialog.
    pub approval_selected: usize,
    /// Servers already asked about in this session (Esc means "not now", and is not asked again).
    asked: HashSet<String>,
    /// The `/mcp` list, while open.
    pub view: Option<McpView>,
}

/// The open `/mcp` list.
#[derive(Clone, Debug, Default)]
pub struct McpView {
    pub selected: usize,
    /// The selected server's tools are listed under it.
    pub expanded: bool,
}

/// The approval dialog's answers, in Claude Code's order and words.
pub const APPROVAL_CHOICES: [(McpChoice, &str); 3] = [
    (McpChoice::ApproveAll, "Use this and all future MCP servers in this project"),
    (McpChoice::Approve, "Use this MCP server"),
    (McpChoice::Refuse, "Continue without using this MCP server"),
];

/// The answer highlighted when the dialog opens: "Continue without", so that an Enter typed ahead (or pressed
/// without reading) never starts a repository's command. Claude Code highlights the first answer; tandem fails
/// closed (docs/architecture.md).
pub const DEFAULT_APPROVAL_CHOICE: usize = 2;

impl App {
    /// A new list from core: kept, new `.mcp.json` servers queued for approval, prompts offered as commands.
    pub(crate) fn on_mcp_servers(&mut self, servers: Vec<McpServerView>) {
        for server in servers.iter().filter(|server| server.needs_approval) {
            if self.mcp.asked.insert(server.name.clone()) {
                if self.mcp.approvals.is_empty() {
                    self.mcp.approval_selected = DEFAULT_APPROVAL_CHOICE;
                }
                self.mcp.approvals.push_back(server.name.clone());
            }
        }
        let prompts: Vec<SlashCommand> = servers
            .iter()
            .flat_map(|server| {
                server.prompts.iter().map(move |prompt| {
                    let arguments =
                        prompt.arguments.iter().map(|argument| format!("<{argument}>")).collect::<Vec<_>>().join(" ");
                    let hint = if arguments.is_empty() { String::new() } else { format!("{arguments} · ") };
                    SlashCommand {
                        name: format!("/{}", prompt.command).into(),
                        description: format!("{hint}{} (MCP {})", prompt.description, server.name).into(),
                    }
                })
            })
            .collect();
        self.editor.set_mcp_commands(prompts);
        let mentions = servers
            .iter()
            .flat_map(|server| {
                server.resources.iter().map(move |uri| SlashCommand {
                    name: format!("@{}:{uri}", server.name).into(),
                    description: format!("resource (MCP {})", server.name).into(),
                })
            })
            .collect();
        self.editor.set_mentions(mentions);
        if let Some(view) = &mut self.mcp.view {
            view.selected = view.selected.min(servers.len().saturating_sub(1));
        }
        self.mcp.servers = servers;
    }

    /// `/mcp`: the servers (asking core for a fresh list too).
    pub(crate) fn open_mcp_view(&mut self) -> Vec<Effect> {
        self.mcp.view = Some(McpView::default());
        vec![Effect::Op(Op::Mcp(McpRequest::Refresh))]
    }

    /// The server the approval dialog asks about.
    pub fn approval_server(&self) -> Option<&McpServerView> {
        let name = self.mcp.approvals.front()?;
        self.mcp.servers.iter().find(|server| &server.name == name)
    }

    pub(crate) fn on_approval_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(server) = self.mcp.approvals.front().cloned() else { return Vec::new() };
        let choice = match key.code {
            KeyCode::Up | KeyCode::Char('k') => {
                self.mcp.approval_selected = self.mcp.approval_selected.saturating_sub(1);
                return Vec::new();
            }
            KeyCode::Down | KeyCode::Char('j') => {
                self.mcp.approval_selected = (self.mcp.approval_selected + 1).min(APPROVAL_CHOICES.len() - 1);
                return Vec::new();
            }
            KeyCode::Char(digit @ '1'..='3') => Some(APPROVAL_CHOICES[digit as usize - '1' as usize].0),
            KeyCode::Enter => Some(APPROVAL_CHOICES[self.mcp.approval_selected].0),
            // Not now: the server stays off in this session and is asked about in the next one.
            KeyCode::Esc => None,
            _ => return Vec::new(),
        };
        self.mcp.approvals.pop_front();
        self.mcp.approval_selected = DEFAULT_APPROVAL_CHOICE;
        let Some(choice) = choice else {
            self.flash(format!("MCP server {server} not started; tandem asks again next time"));
            return Vec::new();
        };
        if choice == McpChoice::ApproveAll {
            // Every other waiting server is approved with it.
            self.mcp.approvals.clear();
        }
        vec![Effect::Op(Op::Mcp(McpRequest::Decide { server, choice }))]
    }

    pub(crate) fn on_mcp_view_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let count = self.mcp.servers.len();
        let Some(view) = &mut self.mcp.view else { return Vec::new() };
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => self.mcp.view = None,
            KeyCode::Down | KeyCode::Char('j') => {
                view.selected = (view.selected + 1).min(count.saturating_sub(1));
                view.expanded = false;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                view.selected = view.selected.saturating_sub(1);
                view.expanded = false;
            }
            KeyCode::Enter | KeyCode::Char(' ') => view.expanded = !view.expanded,
            KeyCode::Char('r') => {
                let Some(server) = self.mcp.servers.get(view.selected) else { return Vec::new() };
                if server.needs_approval {
                    let name = server.name.clone();
                    if self.mcp.approvals.is_empty() {
                        self.mcp.approval_selected = DEFAULT_APPROVAL_CHOICE;
                    }
                    self.mcp.approvals.push_back(name);
                    return Vec::new();
                }
                let server = server.name.clone();
                self.flash(format!("reconnecting {server}…"));
                return vec![Effect::Op(Op::Mcp(McpRequest::Reconnect { server }))];
            }
            _ => {}
        }
        Vec::new()
    }
}
