//! Snapshots of the dialog as a terminal shows it (text only: colours are asserted cell by cell in `tests`).
//! The snapshot files live in `ui/snapshots/`.

use ratatui::crossterm::event::KeyCode;

use super::PermissionDialog;
use super::tests::{bash_dialog, char_key, draw, edit_dialog, key, screen, write_dialog};
use crate::ui::theme::{ColorDepth, Theme};

fn snapshot(name: &str, dialog: &PermissionDialog, width: u16, height: u16) {
    let text = screen(&draw(dialog, width, height, &Theme::new(ColorDepth::TrueColor)));
    insta::with_settings!({ snapshot_path => "../snapshots" }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn edit_two_hunks_100x30() {
    snapshot("edit_two_hunks_100x30", &edit_dialog(), 100, 30);
}

#[test]
fn edit_two_hunks_40x30() {
    snapshot("edit_two_hunks_40x30", &edit_dialog(), 40, 30);
}

#[test]
fn edit_hunk_two_rejected() {
    let mut dialog = edit_dialog();
    dialog.handle_key(key(KeyCode::Tab));
    dialog.handle_key(char_key(' '));
    snapshot("edit_hunk_two_rejected", &dialog, 100, 30);
}

#[test]
fn bash_long_command() {
    snapshot("bash_long_command_80x16", &bash_dialog(), 80, 16);
    snapshot("bash_long_command_40x20", &bash_dialog(), 40, 20);
}

#[test]
fn write_new_file() {
    snapshot("write_new_file", &write_dialog(), 80, 16);
}

#[test]
fn feedback_mode() {
    let mut dialog = bash_dialog();
    dialog.handle_key(char_key('f'));
    dialog.paste("use pnpm, and keep the build cache");
    snapshot("feedback_mode", &dialog, 80, 16);
}

#[test]
fn tiny_terminal() {
    snapshot("tiny_20x8", &edit_dialog(), 20, 8);
}
