//! Parameter files: TOML, with `key=value` overrides from the command line.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::Error;

/// A parameter file or override could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or names an unknown parameter or a value of the wrong type.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The parser's message (names the key and line).
        message: String,
    },
    /// A `--set` is not `key=value`, or the result does not fit the parameters.
    #[error("--set {set}: {message}")]
    Set {
        /// The override as given.
        set: String,
        /// What is wrong.
        message: String,
    },
}

impl From<ParamsError> for Error {
    fn from(e: ParamsError) -> Self {
        match e {
            ParamsError::Io { path, source } => Error::Io { path, source },
            other => Error::Output { path: std::path::PathBuf::from("parameters"), reason: other.to_string() },
        }
    }
}

/// Parses the right side of `key=value`: a TOML value if it is one, else a string (so
/// `flux_form=signed` works without quotes).
fn value_of(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").unwrap_or_else(|| toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Loads parameters of type `P`: its defaults, then the TOML file if any, then each `key=value`
/// of `sets` in order. Unknown keys are errors.
pub fn load<P: DeserializeOwned>(file: Option<&Path>, sets: &[String]) -> Result<P, ParamsError> {
    let table = match file {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|source| ParamsError::Io { path: path.to_path_buf(), source })?;
            let located =
                |e: toml::de::Error| ParamsError::File { path: path.to_path_buf(), message: located(&text, &e) };
            // the file alone must make sense, so its errors name the file and the line
            toml::from_str::<P>(&text).map_err(located)?;
            text.parse::<toml::Table>().map_err(located)?
        }
        None => toml::Table::new(),
    };
    with_sets(table, sets)
}

/// Loads parameters of type `P` starting from `base` (a preset): the TOML file's keys on top,
/// then each `key=value` of `sets` in order. Unknown keys are errors.
pub fn load_onto<P: serde::Serialize + DeserializeOwned>(
    base: &P,
    file: Option<&Path>,
    sets: &[String],
) -> Result<P, ParamsError> {
    let mut table = toml::Value::try_from(base)
        .ok()
        .and_then(|v| v.as_table().cloned())
        .ok_or_else(|| ParamsError::Set { set: String::new(), message: "parameters are not a table".into() })?;
    if let Some(path) = file {
        let text =
            std::fs::read_to_string(path).map_err(|source| ParamsError::Io { path: path.to_path_buf(), source })?;
        let located = |e: toml::de::Error| ParamsError::File { path: path.to_path_buf(), message: located(&text, &e) };
        // the file alone must make sense, so its errors name the file and the line
        toml::from_str::<P>(&text).map_err(located)?;
        for (key, value) in text.parse::<toml::Table>().map_err(located)? {
            table.insert(key, value);
        }
    }
    with_sets(table, sets)
}

/// `params` with each `key=value` of `sets` applied in order, read as the command line's `--set`
/// reads them (the viewer edits live parameters this way). Unknown keys and wrong types are
/// errors naming the override; ranges are the caller's `validate()`.
pub fn apply_sets<P: serde::Serialize + DeserializeOwned>(params: &P, sets: &[String]) -> Result<P, ParamsError> {
    let table = toml::Value::try_from(params)
        .ok()
        .and_then(|v| v.as_table().cloned())
        .ok_or_else(|| ParamsError::Set { set: String::new(), message: "parameters are not a table".into() })?;
    with_sets(table, sets)
}

/// `table` with each `key=value` of `sets` applied in order, each checked as it lands, as `P`.
fn with_sets<P: DeserializeOwned>(mut table: toml::Table, sets: &[String]) -> Result<P, ParamsError> {
    for set in sets {
        let Some((key, value)) = set.split_once('=') else {
            return Err(ParamsError::Set { set: set.clone(), message: "expected key=value".into() });
        };
        table.insert(key.trim().to_string(), value_of(value.trim()));
        P::deserialize(toml::Value::Table(table.clone()))
            .map_err(|e| ParamsError::Set { set: set.clone(), message: e.to_string().trim().to_string() })?;
    }
    P::deserialize(toml::Value::Table(table))
        .map_err(|e| ParamsError::Set { set: String::new(), message: e.to_string().trim().to_string() })
}

/// Loads the parameters of a model made from the models' list (see
/// [`erode::models::make`]): `base` (a preset's table), the TOML file's keys on top, then each
/// `key=value` of `sets` in order, each checked by `read` (the model's reading of its
/// parameters, whose message names an unknown key or a wrong type) as it lands.
pub fn load_table(
    base: &erode::models::make::Table,
    file: Option<&Path>,
    sets: &[String],
    read: impl Fn(&erode::models::make::Table) -> Result<(), String>,
) -> Result<erode::models::make::Table, ParamsError> {
    let json = |v: &toml::Value| serde_json::to_value(v).unwrap_or(serde_json::Value::Null);
    let mut table = base.clone();
    if let Some(path) = file {
        let text =
            std::fs::read_to_string(path).map_err(|source| ParamsError::Io { path: path.to_path_buf(), source })?;
        let file_error = |message: String| ParamsError::File { path: path.to_path_buf(), message };
        let keys = text.parse::<toml::Table>().map_err(|e| file_error(located(&text, &e)))?;
        for (key, value) in &keys {
            table.insert(key.clone(), json(value));
        }
        read(&table).map_err(file_error)?;
    }
    for set in sets {
        let Some((key, value)) = set.split_once('=') else {
            return Err(ParamsError::Set { set: set.clone(), message: "expected key=value".into() });
        };
        table.insert(key.trim().to_string(), json(&value_of(value.trim())));
        read(&table).map_err(|message| ParamsError::Set { set: set.clone(), message })?;
    }
    Ok(table)
}

/// A TOML error as ``line N (`the line`): message`` (the line of the span's start), on one line.
fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let start = span.start.min(text.len());
            let line = text[..start].matches('\n').count() + 1;
            let source: String = text.lines().nth(line - 1).unwrap_or("").trim().chars().take(60).collect();
            format!("line {line} (`{source}`): {message}")
        }
        None => message,
    }
}

/// Writes `params` as TOML, each key preceded by its documentation as a comment.
pub fn to_commented_toml<P: serde::Serialize>(params: &P, docs: &[erode::models::ParamDoc], header: &str) -> String {
    let table = toml::Value::try_from(params).ok().and_then(|v| v.as_table().cloned()).unwrap_or_default();
    let mut out = String::new();
    for line in header.lines() {
        out.push_str(&format!("# {line}\n"));
    }
    out.push('\n');
    let mut arrays = String::new();
    for &erode::models::ParamDoc { name, doc, .. } in docs {
        let Some(value) = table.get(name) else { continue };
        if let toml::Value::Array(items) = value {
            arrays.push_str(&format!("# {name}: {doc}\n"));
            if items.is_empty() {
                arrays.push_str(&format!(
                    "# [[{name}]]\n# x = 10.0\n# y = 20.0\n# radius = 2.0\n# rate = 0.5\n# units = \"cells\"\n"
                ));
            }
            for item in items {
                let mut one = toml::Table::new();
                one.insert(name.to_string(), toml::Value::Array(vec![item.clone()]));
                arrays.push_str(&toml::to_string(&one).unwrap_or_default());
            }
            continue;
        }
        out.push_str(&format!("# {doc}\n{name} = {value}\n\n"));
    }
    out.push_str(&arrays);
    out
}

#[cfg(test)]
mod tests {
    use erode::models::{droplet, grid, stream_power};

    /// Every choice a parameter offers (the viewer's menus) reads as that parameter, as `--set`
    /// reads it, and a value that is none of them is refused there or by `valid` (the model's
    /// `validate`). A choice that needs a map or a context to run (a rain map, say) need only read.
    fn check<P: serde::Serialize + serde::de::DeserializeOwned>(
        model: &str,
        params: &P,
        docs: &[erode::models::ParamDoc],
        valid: impl Fn(&P) -> bool,
    ) {
        for d in docs.iter().filter(|d| !d.choices.is_empty()) {
            for choice in d.choices {
                let set = format!("{}={choice}", d.name);
                if let Err(e) = super::apply_sets(params, std::slice::from_ref(&set)) {
                    panic!("{model}: {set}: {e}");
                }
            }
            let bad = format!("{}=no-such-choice", d.name);
            let read = super::apply_sets(params, std::slice::from_ref(&bad));
            assert!(read.as_ref().is_err() || read.as_ref().is_ok_and(|p| !valid(p)), "{model}: {bad} accepted");
        }
    }

    #[test]
    fn every_choice_reads_as_its_parameter() {
        check("grid", &grid::Params::default(), grid::PARAM_DOCS, |p| p.validate().is_ok());
        check("droplet", &droplet::Params::default(), droplet::PARAM_DOCS, |p| p.validate().is_ok());
        check("stream-power", &stream_power::Params::default(), stream_power::PARAM_DOCS, |p| p.validate().is_ok());
    }
}
