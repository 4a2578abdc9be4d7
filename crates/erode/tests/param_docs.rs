//! Every default a parameter's documentation states is the value `Params::default()` holds: the
//! field docs are read from the source and each "Default X" compared with the default params'
//! serialised field, for every model.

use serde_json::Value;

/// (field, the text after "Default ") for every field of `struct Params` in `source` whose doc
/// comment states a default.
fn documented_defaults(source: &str) -> Vec<(String, String)> {
    let start = source.find("pub struct Params {").expect("no struct Params");
    let body = &source[start..];
    let body = &body[..body.find("\n}\n").expect("no end of struct Params")];
    let mut found = Vec::new();
    let mut doc = String::new();
    for line in body.lines().skip(1) {
        let line = line.trim();
        if let Some(text) = line.strip_prefix("///") {
            doc.push(' ');
            doc.push_str(text.trim());
        } else if let Some(rest) = line.strip_prefix("pub ") {
            let field = rest.split(':').next().unwrap_or("").trim().to_string();
            if let Some(at) = doc.find("Default ") {
                let token = doc[at + "Default ".len()..].split_whitespace().next().unwrap_or("").to_string();
                found.push((field, token));
            }
            doc.clear();
        } else if !line.starts_with("#[") {
            doc.clear();
        }
    }
    found
}

/// Whether the documented `token` says `value`.
fn says(token: &str, value: &Value) -> bool {
    let token = token.trim_end_matches(['.', ',', ';', ':', ')']).trim_matches(['"', '`', '(']);
    match value {
        Value::Number(n) => {
            let v = n.as_f64().unwrap_or(f64::NAN);
            let t = token.replace(',', "");
            t.parse::<f64>().is_ok_and(|t| t == v || (t - v).abs() <= 1e-12 * v.abs())
        }
        Value::String(s) => s.eq_ignore_ascii_case(token),
        Value::Bool(b) => token == b.to_string(),
        // a float the JSON has no number for
        Value::Null => token == "-inf" || token == "inf",
        _ => false,
    }
}

fn check(model: &str, source: &str, defaults: Value) {
    let documented = documented_defaults(source);
    assert!(!documented.is_empty(), "{model}: no documented default found");
    let wrong: Vec<String> = documented
        .iter()
        .filter_map(|(field, token)| {
            let value = defaults.get(field).unwrap_or_else(|| panic!("{model}: no field {field} in the defaults"));
            (!says(token, value)).then(|| format!("{field}: documented {token}, default {value}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{model}: field docs disagree with Params::default():\n{}", wrong.join("\n"));
}

#[test]
fn every_documented_default_is_the_default() {
    use erode::models::{droplet, grid, sph, stream_power};
    let json = |v: Result<Value, serde_json::Error>| v.unwrap();
    check("grid", include_str!("../src/models/grid/params.rs"), json(serde_json::to_value(grid::Params::default())));
    check(
        "droplet",
        include_str!("../src/models/droplet/params.rs"),
        json(serde_json::to_value(droplet::Params::default())),
    );
    check(
        "stream power",
        include_str!("../src/models/stream_power/params.rs"),
        json(serde_json::to_value(stream_power::Params::default())),
    );
    check("sph", include_str!("../src/models/sph/params.rs"), json(serde_json::to_value(sph::Params::default())));
    // and every model made from the list, from its folder's params.rs
    for m in erode::models::MODELS.iter() {
        if let Some(maker) = m.make {
            check(m.name, &params_source(m.name), Value::Object((maker.defaults)()));
        }
    }
}

/// The source of the model `name`'s parameters, `src/models/NAME/params.rs`.
fn params_source(name: &str) -> String {
    let path = format!("{}/src/models/{}/params.rs", env!("CARGO_MANIFEST_DIR"), name.replace('-', "_"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The models' list documents every parameter of every model once, in the order of its
/// `Params`' fields, and nothing that is not one; each list's default preset is the model's
/// default parameters.
#[test]
fn the_models_list_documents_every_parameter_once_and_no_other() {
    use erode::models::{MODELS, droplet, grid, sph, stream_power};
    let defaults = |name: &str| -> Value {
        match name {
            grid::NAME => serde_json::to_value(grid::Params::default()),
            droplet::NAME => serde_json::to_value(droplet::Params::default()),
            stream_power::NAME => serde_json::to_value(stream_power::Params::default()),
            sph::NAME => serde_json::to_value(sph::Params::default()),
            other => {
                let maker = erode::models::info::find(other).and_then(|m| m.make);
                Ok(Value::Object((maker.expect("a model with no maker the test does not know").defaults)()))
            }
        }
        .unwrap()
    };
    for m in MODELS.iter() {
        let value = defaults(m.name);
        // serde_json's map is sorted: the field order is checked against the source below
        let fields: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        let mut documented: Vec<&str> = m.params.iter().map(|d| d.name).collect();
        documented.sort_unstable();
        assert_eq!(documented, fields, "{}: documented parameters against Params' fields", m.name);
        for d in m.params {
            assert!(d.doc.len() > 10, "{}: {} is barely documented: {:?}", m.name, d.name, d.doc);
        }
        let presets = (m.presets)();
        if let Some((first, _)) = presets.first() {
            let preset = match m.name {
                grid::NAME => serde_json::to_value(grid::preset(first).unwrap()),
                droplet::NAME => serde_json::to_value(droplet::preset(first).unwrap()),
                stream_power::NAME => serde_json::to_value(stream_power::preset(first).unwrap()),
                _ => Ok(Value::Object((m.make.expect("presets the test does not know").preset)(first).unwrap())),
            }
            .unwrap();
            assert_eq!(preset, value, "{}: the first preset, {first}, is not the default", m.name);
        }
    }
    // in declaration order: each list follows its struct's fields
    let made = MODELS.iter().filter(|m| m.make.is_some()).map(|m| (*m, params_source(m.name)));
    for (m, source) in [
        (grid::INFO, include_str!("../src/models/grid/params.rs").to_string()),
        (droplet::INFO, include_str!("../src/models/droplet/params.rs").to_string()),
        (stream_power::INFO, include_str!("../src/models/stream_power/params.rs").to_string()),
        (sph::INFO, include_str!("../src/models/sph/params.rs").to_string()),
    ]
    .into_iter()
    .chain(made)
    {
        let start = source.find("pub struct Params {").unwrap();
        let body = &source[start..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let fields: Vec<&str> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("pub ").and_then(|r| r.split(':').next()))
            .filter(|f| !f.contains(' '))
            .collect();
        let documented: Vec<&str> = m.params.iter().map(|d| d.name).collect();
        assert_eq!(documented, fields, "{}: the docs' order", m.name);
    }
}

/// Each model's presets as JSON objects (the defaults for a model without presets).
fn presets_of(info: &erode::models::ModelInfo) -> Vec<(String, serde_json::Map<String, Value>)> {
    use erode::models::{droplet, grid, sph, stream_power};
    let object = |v: Value| match v {
        Value::Object(o) => o,
        other => panic!("{}: parameters are not a table: {other}", info.name),
    };
    let one = |name: &str| -> Value {
        let json = |v: Result<Value, serde_json::Error>| v.unwrap_or_else(|e| panic!("{e}"));
        match info.name {
            grid::NAME => json(serde_json::to_value(grid::preset(name).unwrap_or_else(|e| panic!("{e}")))),
            droplet::NAME => json(serde_json::to_value(droplet::preset(name).unwrap_or_else(|e| panic!("{e}")))),
            stream_power::NAME => {
                json(serde_json::to_value(stream_power::preset(name).unwrap_or_else(|e| panic!("{e}"))))
            }
            _ => match info.make {
                Some(maker) => Value::Object((maker.preset)(name).unwrap_or_else(|e| panic!("{e}"))),
                None => panic!("{}: no presets to read", info.name),
            },
        }
    };
    let names: Vec<&str> = (info.presets)().iter().map(|p| p.0).collect();
    if names.is_empty() {
        assert_eq!(info.name, sph::NAME, "only SPH has no presets");
        return vec![("default".into(), object(serde_json::to_value(sph::Params::default()).unwrap()))];
    }
    names.iter().map(|&n| (n.to_string(), object(one(n)))).collect()
}

/// Every slider spans something (a log slider above 0), states a unit its doc states too, and
/// holds every preset's value (0 may sit below a log slider: "off"); every parameter that is a
/// real number has one, but for the SPH switch written as a number.
#[test]
fn every_number_has_a_slider_that_holds_every_preset() {
    const TYPED_NUMBERS: [&str; 1] = ["mirror_walls"];
    let mut wrong = Vec::new();
    for info in erode::models::MODELS.iter() {
        for d in info.params {
            let Some(s) = d.slider else { continue };
            assert!(s.min < s.max && s.min.is_finite() && s.max.is_finite(), "{}.{}: {s:?}", info.name, d.name);
            assert!(!s.log || s.min > 0.0, "{}.{}: a log slider from {}", info.name, d.name, s.min);
            assert!(d.doc.contains(s.unit), "{}.{}: unit `{}` not in its doc: {}", info.name, d.name, s.unit, d.doc);
        }
        for (preset, values) in presets_of(info) {
            for d in info.params {
                let value = values.get(d.name);
                let number = value.and_then(Value::as_f64).filter(|_| value.is_some_and(|v| v.is_f64()));
                match (d.slider, number) {
                    (Some(s), Some(v)) if !((s.min..=s.max).contains(&v) || (s.log && v == 0.0)) => {
                        wrong.push(format!(
                            "{} preset {preset}: {} = {v} outside its slider {}..{}",
                            info.name, d.name, s.min, s.max
                        ))
                    }
                    (Some(_), None) => {
                        wrong.push(format!("{} preset {preset}: {} has a slider but is {value:?}", info.name, d.name))
                    }
                    (None, Some(_)) if !TYPED_NUMBERS.contains(&d.name) => {
                        wrong.push(format!("{}: {} is a number without a slider", info.name, d.name))
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every preset's value of a choice is one of its choices, as a parameter file writes it.
#[test]
fn every_preset_chooses_among_its_parameters_choices() {
    let mut wrong = Vec::new();
    for info in erode::models::MODELS.iter() {
        for (preset, values) in presets_of(info) {
            for d in info.params.iter().filter(|d| !d.choices.is_empty()) {
                let written = match values.get(d.name) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => continue,
                };
                if !d.choices.contains(&written.as_str()) {
                    wrong.push(format!("{} preset {preset}: {} = {written} not in {:?}", info.name, d.name, d.choices));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
