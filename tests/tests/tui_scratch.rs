use serde_json::json;
use tandem_e2e::pty::{Pty, anthropic_command, keys, tandem_command};
use tandem_e2e::{FakeServer, Scenario, Workspace};

fn scen(v: serde_json::Value) -> Scenario { Scenario::from_json(&v.to_string()).unwrap() }

#[test]
fn scratch_basic() {
    let ws = Workspace::new();
    ws.write("hello.txt", "fn main() {\n    println!(\"Hello, world\");\n}\n");
    let server = FakeServer::spawn(scen(json!({"replies":[
        {"blocks":[{"type":"text","text":"Let me read.","chunks":2},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"hello.txt"}}]},
        {"blocks":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"hello.txt","old_string":"Hello, world","new_string":"Hello, tandem"}}]},
        {"blocks":[{"type":"text","text":"I changed the **greeting** to say tandem. This is a long paragraph that goes on and on to check wrapping at narrow widths, with many words.","chunks":8}], "delay_ms": 20}
    ]}))).unwrap();
    let t0 = std::time::Instant::now();
    let pty = Pty::spawn(anthropic_command(&ws, &server), 40, 120);
    let s = pty.expect("first frame", |s| s.contains("Ask tandem"));
    eprintln!("first frame after {:?}\n{s}", t0.elapsed());
    pty.send("change the greeting");
    pty.send(keys::ENTER);
    let s = pty.expect("dialog", |s| s.contains("Allow"));
    eprintln!("DIALOG\n{s}");
    pty.send("y");
    let s = pty.expect_text("many words");
    eprintln!("ANSWER\n{s}");
    pty.send(keys::CTRL_C);
    let s = pty.expect_text("again");
    eprintln!("CTRLC\n{s}");
    pty.send(keys::CTRL_C);
    let mut pty = pty;
    let st = pty.wait_exit(std::time::Duration::from_secs(20));
    eprintln!("EXIT {st:?} alt={}\n{}", pty.alternate_screen(), pty.screen_text());
}

#[test]
fn scratch_dialog_small() {
    let ws = Workspace::new();
    ws.write("hello.txt", "fn main() {\n    println!(\"Hello, world\");\n}\n");
    let server = FakeServer::spawn(scen(json!({"replies":[
        {"blocks":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"hello.txt","old_string":"Hello, world","new_string":"Hello, tandem"}}]},
        {"blocks":[{"type":"text","text":"done"}]}
    ]}))).unwrap();
    let pty = Pty::spawn(anthropic_command(&ws, &server), 24, 80);
    pty.expect("first frame", |s| s.contains("Ask tandem"));
    pty.send("go\r");
    let s = pty.expect("dialog", |s| s.contains("Allow"));
    eprintln!("DIALOG80\n{s}");
    pty.send("n");
    let s = pty.expect_text("done");
    eprintln!("AFTER\n{s}");
}

#[test]
fn scratch_onboarding() {
    let ws = Workspace::new();
    let mut pty = Pty::spawn(tandem_command(&ws), 30, 100);
    let s = pty.expect("onboarding", |s| s.contains("ANTHROPIC_API_KEY"));
    eprintln!("ONB\n{s}");
    pty.send("q");
    let st = pty.wait_exit(std::time::Duration::from_secs(20));
    eprintln!("EXIT {st:?}\n{}", pty.screen_text());
}

#[test]
fn scratch_panic() {
    let ws = Workspace::new();
    let server = FakeServer::spawn(scen(json!({"replies":[]}))).unwrap();
    let mut cmd = anthropic_command(&ws, &server);
    cmd.env("TANDEM_TEST_PANIC", "1");
    let mut pty = Pty::spawn(cmd, 30, 100);
    let st = pty.wait_exit(std::time::Duration::from_secs(20));
    eprintln!("EXIT {st:?} alt={}\n{}", pty.alternate_screen(), pty.screen_text());
}
