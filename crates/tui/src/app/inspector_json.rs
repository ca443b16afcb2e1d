//! JSON laid out for the inspector: serde's pretty layout (two-space indent), with everything below a depth
//! folded into one line (`{… 3 keys}`, `[… 12 items]`), so a long conversation reads as a list of messages.

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
        Value::Object(map) if folded => {
            let keys = if map.len() == 1 { "1 key".to_owned() } else { format!("{} keys", map.len()) };
            out.push(format!("{indent}{label}{{… {keys}}}{end}"));
        }
        Value::Array(items) if folded => {
            let count = if items.len() == 1 { "1 item".to_owned() } else { format!("{} items", items.len()) };
            out.push(format!("{indent}{label}[… {count}]{end}"));
        }
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
                "    {… 2 keys},",
                "    {… 2 keys}",
                "  ],",
                "  \"n\": 1",
                "}"
            ]
        );
        assert_eq!(json_lines(&value, Some(1))[2], "  \"messages\": [… 2 items],");
    }
}
