//! The parameter table of every model's panel: a slider in its unit for each number, a menu for
//! each choice, a text field for the rest, its documentation on hover, edited as the CLI's
//! `--set key=value`.

use std::collections::HashMap;

use eframe::egui;

use crate::world::{Action, ModelKind};

/// The action that sets `model`'s parameters to its preset `name` (the same names and values as
/// `erode params MODEL --preset NAME`), keeping the grid's river sources (`sources`) as placed.
pub fn preset_action(model: ModelKind, name: &str, sources: &[erode::models::grid::Source]) -> Result<Action, String> {
    use erode::models::{droplet, grid, stream_power};
    Ok(match model {
        ModelKind::Grid => {
            let mut p = grid::preset(name).map_err(|e| e.to_string())?;
            p.sources = sources.to_vec();
            Action::SetGridParams(Box::new(p))
        }
        ModelKind::Droplet => Action::SetDropletParams(Box::new(droplet::preset(name).map_err(|e| e.to_string())?)),
        ModelKind::StreamPower => {
            Action::SetStreamPowerParams(Box::new(stream_power::preset(name).map_err(|e| e.to_string())?))
        }
        ModelKind::Made(model_name) => {
            let Some(maker) = model.info().make else {
                return Err(format!("the {model_name} model has no presets here"));
            };
            Action::SetMadeParams(model_name, Box::new((maker.preset)(name).map_err(|e| e.to_string())?))
        }
    })
}

/// Shows `docs`' parameters with their values in `table`: a menu for a choice, a slider in its
/// unit for a number
/// (its span from the parameter's [`erode::models::Slider`]; a value typed into its box may go
/// past it, the model's own checks decide), a text field for the rest (`texts`: the fields being
/// edited), each with its documentation on hover. Returns `name=value` when the user lets go of a
/// changed slider or commits a changed field.
pub fn param_table(
    ui: &mut egui::Ui,
    id: &str,
    docs: &[erode::models::ParamDoc],
    table: &toml::Table,
    texts: &mut HashMap<&'static str, String>,
) -> Option<String> {
    let mut set = None;
    egui::Grid::new(id).num_columns(2).striped(true).show(ui, |ui| {
        for &erode::models::ParamDoc { name, doc, slider, choices } in docs {
            if name == "sources" {
                continue;
            }
            ui.label(name).on_hover_text(doc);
            let number = table.get(name).and_then(|v| v.as_float());
            if let (Some(s), Some(value)) = (slider, number) {
                // while dragged or typed into, the slider's value lives in `texts`
                let mut v = texts.get(name).and_then(|t| t.parse::<f64>().ok()).unwrap_or(value);
                let mut widget =
                    egui::Slider::new(&mut v, s.min..=s.max).logarithmic(s.log).clamping(egui::SliderClamping::Never);
                if s.log {
                    widget = widget.smallest_positive(s.min);
                }
                if !s.unit.is_empty() {
                    widget = widget.suffix(format!(" {}", s.unit.replace("^2", "²").replace("^3", "³")));
                }
                let edit = ui.add(widget).on_hover_text(doc);
                if edit.dragged() || edit.has_focus() {
                    texts.insert(name, v.to_string());
                } else {
                    if v != value {
                        set = Some(format!("{name}={v}"));
                    }
                    // the world's value from the next frame on (a refused one springs back)
                    texts.remove(name);
                }
            } else if !choices.is_empty() {
                let current = table.get(name).map(show_value).unwrap_or_default();
                egui::ComboBox::from_id_salt((id, name))
                    .selected_text(current.as_str())
                    .show_ui(ui, |ui| {
                        for &choice in choices {
                            if ui.selectable_label(current == choice, choice).clicked() && current != choice {
                                set = Some(format!("{name}={choice}"));
                            }
                        }
                    })
                    .response
                    .on_hover_text(doc);
            } else {
                let current = table.get(name).map(show_value).unwrap_or_default();
                let text = texts.entry(name).or_insert_with(|| current.clone());
                let edit = ui.add(egui::TextEdit::singleline(text).desired_width(110.0)).on_hover_text(doc);
                if edit.lost_focus() && *text != current {
                    set = Some(format!("{name}={text}"));
                } else if !edit.has_focus() {
                    *text = current;
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_of_every_model_is_an_action() {
        for info in erode::models::MODELS.iter() {
            let model = match info.name {
                erode::models::grid::NAME => ModelKind::Grid,
                erode::models::droplet::NAME => ModelKind::Droplet,
                erode::models::stream_power::NAME => ModelKind::StreamPower,
                erode::models::sph::NAME => continue,
                other if info.make.is_some() => ModelKind::Made(other),
                _ => continue,
            };
            for (name, _) in (info.presets)() {
                assert!(preset_action(model, name, &[]).is_ok(), "{}: {name}", info.name);
            }
            assert!(preset_action(model, "no-such-preset", &[]).is_err(), "{}", info.name);
        }
    }
}
