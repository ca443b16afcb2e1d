//! Printing for the commands that list things (`tandem sessions`, `tandem inspect`, `tandem mcp`): piped into
//! `head`, the reader may close the pipe before the listing ends. That ends the listing quietly with exit code 0,
//! as it does for other Unix tools, where `println!` panicked ("failed printing to stdout: Broken pipe").

use std::io::Write;

/// Writes `text` to stdout; a closed pipe ends the process (exit 0), another error is reported once on stderr.
pub fn print(text: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(text).and_then(|()| stdout.flush());
    match written {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(error) => {
            eprintln!("tandem: cannot write to stdout: {error}");
            std::process::exit(1);
        }
    }
}

/// `println!` through [`print`].
macro_rules! say {
    () => { $crate::pipe::print(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::pipe::print(format_args!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use say;

/// `print!` through [`print`].
macro_rules! say_part {
    ($($arg:tt)*) => { $crate::pipe::print(format_args!($($arg)*)) };
}
pub(crate) use say_part;
