//! JSON laid out for the inspector: serde's pretty layout (two-space indent), with everything below a depth
//! folded into one line that still says what it is — an object as its short members (`{"role": "user",
//! "content": [… 2 items]}`), an array as its count (`[… 12 items]`) — so a long conversation reads as a list of
//! messages, who said each.

use serde_json::Value;

/// `value` as pretty lines; objects and arrays at `fold` depth or deeper shown folded (the top is depth 0).
pub fn json_lines(value: &Value, fold: Option<usize>) -> Vec<String> {
    let mut lines = Vec::new();
    write(value, None, 0, false, fold, &mut lines);
    lines
}

fn write(value: &Value, key: Option<&str>, depth: usize, comma: bool, fold: Option<usize>, out: &mut Vec<String>) {
    let indent = "  ".repeat(depth);
    let label = key.map(|key| format!("{}: ", Value::String(key.to_owned()))).unwrap_or_default();
    let end = if comma { "," } else { "" };
    let folded = fold.is_some_and(|fold| depth >= fold);
    match value {
        Value::Object(map) if map.is_empty() => out.push(format!("{indent}{label}{{}}{end}")),
        Value::Array(items) if items.is_empty() => out.push(format!("{indent}{label}[]{end}")),
        Value::Object(_) if folded => out.push(format!("{indent}{label}{}{end}", folded_object(value))),
        Value::Array(_) if folded => out.push(format!("{indent}{label}{}{end}", counted(value))),
        Value::Object(map) => {
            out.push(format!("{indent}{label}{{"));
            for (index, (name, child)) in map.iter().enumerate() {
                write(child, Some(name), depth + 1, index + 1 < map.len(), fold, out);
            }
            out.push(format!("{indent}}}{end}"));
        }
        Value::Array(items) => {
            out.push(format!("{indent}{label}["));
            for (index, child) in items.iter().enumerate() {
                write(child, None, depth + 1, index + 1 < items.len(), fold, out);
            }
            out.push(format!("{indent}]{end}"));
        }
        scalar => out.push(format!("{indent}{label}{scalar}{end}")),
    }
}

/// Members of a folded object shown until the line is this long; the rest are counted.
const FOLDED_WIDTH: usize = 100;
/// A string in a folded object is cut to this many characters.
const FOLDED_STRING: usize = 40;

/// A folded object on one line: its members with scalars as they are (long strings cut) and objects and arrays
/// counted, as many as fit, then how many more.
fn folded_object(value: &Value) -> String {
    let Value::Object(map) = value else { return counted(value) };
    let mut parts: Vec<String> = Vec::new();
    let mut used = 0;
    for (index, (name, member)) in map.iter().enumerate() {
        let part = format!("{}: {}", Value::String(name.clone()), short(member));
        if used + part.len() > FOLDED_WIDTH && !parts.is_empty() {
            let left = map.len() - index;
            parts.push(if left == 1 { "… 1 more key".to_owned() } else { format!("… {left} more keys") });
            break;
        }
        used += part.len() + 2;
        parts.push(part);
    }
    format!("{{{}}}", parts.join(", "))
}

/// A member of a folded object: a scalar as it is (a long string cut), an object or array counted.
fn short(value: &Value) -> String {
    match value {
        Value::String(text) if text.chars().count() > FOLDED_STRING => {
            let start: String = text.chars().take(FOLDED_STRING).collect();
            format!("{}…\"", Value::String(start).to_string().trim_end_matches('"'))
        }
        Value::Object(_) | Value::Array(_) => counted(value),
        scalar => scalar.to_string(),
    }
}

/// `{… 3 keys}`, `[… 12 items]` (`{}` and `[]` when empty).
fn counted(value: &Value) -> String {
    match value {
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Array(items) if items.is_empty() => "[]".to_owned(),
        Value::Object(map) if map.len() == 1 => "{… 1 key}".to_owned(),
        Value::Object(map) => format!("{{… {} keys}}", map.len()),
        Value::Array(items) if items.len() == 1 => "[… 1 item]".to_owned(),
        Value::Array(items) => format!("[… {} items]", items.len()),
        scalar => scalar.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unfolded_it_is_serdes_pretty_layout_and_folded_it_counts() {
        let value = json!({"model": "m", "messages": [{"role": "user", "content": "a \"quoted\" word"}, {"role": "assistant", "content": []}], "n": 1});
        assert_eq!(json_lines(&value, None).join("\n"), serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(
            json_lines(&value, Some(2)),
            [
                "{",
                "  \"model\": \"m\",",
                "  \"messages\": [",
                "    {\"role\": \"user\", \"content\": \"a \\\"quoted\\\" word\"},",
                "    {\"role\": \"assistant\", \"content\": []}",
                "  ],",
                "  \"n\": 1",
                "}"
            ]
        );
        assert_eq!(json_lines(&value, Some(1))[2], "  \"messages\": [… 2 items],");
    }

    #[test]
    fn a_folded_object_cuts_long_strings_and_counts_what_does_not_fit() {
        let long = "You are tandem, an AI pair programmer working in the user's terminal.";
        let value = json!({"system": [{"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}]});
        let lines = json_lines(&value, Some(2));
        assert_eq!(
            lines[2],
            "    {\"type\": \"text\", \"text\": \"You are tandem, an AI pair programmer wo…\", \"cache_control\": {… 1 key}}"
        );
        let wide: serde_json::Map<String, serde_json::Value> =
            (0..20).map(|n| (format!("key_{n}"), json!("a value of some length"))).collect();
        let lines = json_lines(&json!({"wide": [wide]}), Some(2));
        assert!(lines[2].ends_with("… 18 more keys}"), "{}", lines[2]);
        assert!(lines[2].len() < 140, "{}", lines[2]);
    }
}
