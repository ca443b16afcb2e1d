//! A small JSON-schema validator for the subset the tool schemas use.
//!
//! Models send malformed tool inputs often enough that the error has to say exactly what was wrong, in words
//! the model can act on (`missing required field "file_path"`). A general JSON-schema crate would be heavy and
//! its messages are written for humans reading schema paths; the tool schemas only use `type`, `required`,
//! `properties`, `enum`, `minimum`/`maximum`, `items` and `additionalProperties: false`, so that is what is
//! checked here. Keywords outside that subset are ignored, never rejected.

use serde_json::Value;

/// Checks `input` against `schema`. The error names the field and the problem, e.g.
/// `field "limit" must be an integer, got string "ten"`.
pub fn validate(schema: &Value, input: &Value) -> Result<(), String> {
    let Some(object) = input.as_object() else {
        return Err(format!("input must be a JSON object, got {}", describe(input)));
    };
    let properties = schema.get("properties").and_then(Value::as_object);

    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(name) {
                return Err(format!("missing required field \"{name}\""));
            }
        }
    }

    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        for name in object.keys() {
            if !properties.is_some_and(|p| p.contains_key(name)) {
                let known = properties.map(|p| p.keys().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", "));
                return Err(match known {
                    Some(known) if !known.is_empty() => {
                        format!("unknown field \"{name}\" (expected one of: {known})")
                    }
                    _ => format!("unknown field \"{name}\""),
                });
            }
        }
    }

    if let Some(properties) = properties {
        for (name, value) in object {
            if let Some(field_schema) = properties.get(name) {
                check_value(name, field_schema, value)?;
            }
        }
    }
    Ok(())
}

/// Checks one field's value against its schema. `null` for an optional field is accepted as "absent": some
/// models send `"offset": null` for fields they don't use, and rejecting that helps nobody.
fn check_value(field: &str, schema: &Value, value: &Value) -> Result<(), String> {
    if value.is_null() {
        return Ok(());
    }
    if let Some(expected) = schema.get("type").and_then(Value::as_str)
        && !has_type(value, expected)
    {
        let article = if expected.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
        return Err(format!("field \"{field}\" must be {article} {expected}, got {}", describe(value)));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list = allowed.iter().map(Value::to_string).collect::<Vec<_>>().join(", ");
        return Err(format!("field \"{field}\" must be one of {list}, got {value}"));
    }
    if let Some(number) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && number < min
        {
            return Err(format!("field \"{field}\" must be at least {}, got {value}", schema["minimum"]));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && number > max
        {
            return Err(format!("field \"{field}\" must be at most {}, got {value}", schema["maximum"]));
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (index, item) in array.iter().enumerate() {
            check_value(&format!("{field}[{index}]"), items, item)?;
        }
    }
    if value.is_object() && schema.get("properties").is_some() {
        validate(schema, value).map_err(|err| format!("in field \"{field}\": {err}"))?;
    }
    Ok(())
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "string" => value.is_string(),
        // 3.0 is an integer to a model that printed a float; serde_json keeps it as f64, so accept whole floats.
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// A short description of a value for error messages: its JSON type and, for scalars, the value itself.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => {
            let shown: String = s.chars().take(60).collect();
            let ellipsis = if shown.len() < s.len() { "…" } else { "" };
            format!("string {:?}", format!("{shown}{ellipsis}"))
        }
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number"},
                "flag": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "tags": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["file_path"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_valid_input() {
        let input = json!({"file_path": "x", "limit": 3, "ratio": 0.5, "flag": true, "mode": "b", "tags": ["t"]});
        assert_eq!(validate(&schema(), &input), Ok(()));
    }

    #[test]
    fn rejects_non_object() {
        assert_eq!(validate(&schema(), &json!("x")), Err("input must be a JSON object, got string \"x\"".into()));
    }

    #[test]
    fn missing_required_field() {
        assert_eq!(validate(&schema(), &json!({})), Err("missing required field \"file_path\"".into()));
    }

    #[test]
    fn wrong_type_names_field_and_value() {
        let err = validate(&schema(), &json!({"file_path": "x", "limit": "ten"})).unwrap_err();
        assert_eq!(err, "field \"limit\" must be an integer, got string \"ten\"");
        let err = validate(&schema(), &json!({"file_path": 5})).unwrap_err();
        assert_eq!(err, "field \"file_path\" must be a string, got number 5");
        let err = validate(&schema(), &json!({"file_path": "x", "flag": "yes"})).unwrap_err();
        assert!(err.contains("\"flag\" must be a boolean"), "{err}");
        let err = validate(&schema(), &json!({"file_path": "x", "limit": 2.5})).unwrap_err();
        assert!(err.contains("must be an integer, got number 2.5"), "{err}");
    }

    #[test]
    fn whole_float_is_an_integer_and_null_is_absent() {
        assert_eq!(validate(&schema(), &json!({"file_path": "x", "limit": 3.0})), Ok(()));
        assert_eq!(validate(&schema(), &json!({"file_path": "x", "limit": null})), Ok(()));
    }

    #[test]
    fn enum_and_bounds() {
        let err = validate(&schema(), &json!({"file_path": "x", "mode": "c"})).unwrap_err();
        assert_eq!(err, "field \"mode\" must be one of \"a\", \"b\", got \"c\"");
        let err = validate(&schema(), &json!({"file_path": "x", "limit": 0})).unwrap_err();
        assert_eq!(err, "field \"limit\" must be at least 1, got 0");
        let err = validate(&schema(), &json!({"file_path": "x", "limit": 11})).unwrap_err();
        assert_eq!(err, "field \"limit\" must be at most 10, got 11");
    }

    #[test]
    fn unknown_field_rejected_only_when_closed() {
        let err = validate(&schema(), &json!({"file_path": "x", "path": "y"})).unwrap_err();
        assert!(err.starts_with("unknown field \"path\" (expected one of: \"file_path\""), "{err}");
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(validate(&open, &json!({"a": "x", "b": 1})), Ok(()));
    }

    #[test]
    fn array_items_checked() {
        let err = validate(&schema(), &json!({"file_path": "x", "tags": ["a", 1]})).unwrap_err();
        assert_eq!(err, "field \"tags[1]\" must be a string, got number 1");
    }
}
