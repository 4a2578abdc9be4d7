//! The parameter table of every model's panel: a text field a parameter, its documentation on
//! hover, edited as the CLI's `--set key=value`.

use std::collections::HashMap;

use eframe::egui;

/// Shows `docs`' parameters with their values in `table` (`texts`: the fields being edited).
/// Returns `name=value` when the user commits a changed field.
pub fn param_table(
    ui: &mut egui::Ui,
    id: &str,
    docs: &[erode::models::ParamDoc],
    table: &toml::Table,
    texts: &mut HashMap<&'static str, String>,
) -> Option<String> {
    let mut set = None;
    egui::Grid::new(id).num_columns(2).striped(true).show(ui, |ui| {
        for &erode::models::ParamDoc { name, doc } in docs {
            if name == "sources" {
                continue;
            }
            let current = table.get(name).map(show_value).unwrap_or_default();
            ui.label(name).on_hover_text(doc);
            let text = texts.entry(name).or_insert_with(|| current.clone());
            let edit = ui.add(egui::TextEdit::singleline(text).desired_width(110.0)).on_hover_text(doc);
            if edit.lost_focus() && *text != current {
                set = Some(format!("{name}={text}"));
            } else if !edit.has_focus() {
                *text = current;
            }
            ui.end_row();
        }
    });
    set
}

/// The parameters `params` as a table (empty if they are not one).
pub fn as_table<P: serde::Serialize>(params: &P) -> toml::Table {
    toml::Value::try_from(params).ok().and_then(|v| v.as_table().cloned()).unwrap_or_default()
}

fn show_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
