//! Brushes: what a dab of each tool does to the state. Positions and radii are in cells; a dab's
//! weight falls smoothly from 1 at the centre to 0 at the radius, and cells at or beyond the
//! radius are never written, so a stroke changes nothing outside its discs.

use erode::models::grid::State;

/// What a brush paints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BrushKind {
    /// Adds height: `strength` metres per dab at the centre.
    Raise,
    /// Removes height: `strength` metres per dab at the centre.
    Lower,
    /// Pulls heights towards the mean of their 3 x 3 neighbourhood (`strength`: share per dab, 0..1).
    Smooth,
    /// Pulls heights towards the height under the stroke's first dab (`strength`: share per dab).
    Flatten,
    /// Adds water depth: `strength` metres per dab at the centre.
    AddWater,
    /// Removes water depth: `strength` metres per dab at the centre (never below 0).
    RemoveWater,
    /// Pulls hardness `R` towards `value` (`strength`: share per dab).
    Hardness,
    /// Pulls the rain map towards `value` (0..1; `strength`: share per dab). The first dab turns
    /// rain mode to "map", starting from a map without rain.
    Rain,
    /// Adds to the stream-power model's uplift map (a multiplier of the uplift rate, 1 at the
    /// start): `strength` per dab at the centre.
    RaiseUplift,
    /// Takes from the uplift map (never below 0): `strength` per dab at the centre.
    LowerUplift,
}

impl BrushKind {
    /// Every brush, in the order the tool bar shows them.
    pub const ALL: [BrushKind; 10] = [
        BrushKind::Raise,
        BrushKind::Lower,
        BrushKind::Smooth,
        BrushKind::Flatten,
        BrushKind::AddWater,
        BrushKind::RemoveWater,
        BrushKind::Hardness,
        BrushKind::Rain,
        BrushKind::RaiseUplift,
        BrushKind::LowerUplift,
    ];

    /// Name shown in the UI.
    pub fn label(self) -> &'static str {
        match self {
            BrushKind::Raise => "raise",
            BrushKind::Lower => "lower",
            BrushKind::Smooth => "smooth",
            BrushKind::Flatten => "flatten",
            BrushKind::AddWater => "add water",
            BrushKind::RemoveWater => "remove water",
            BrushKind::Hardness => "hardness",
            BrushKind::Rain => "rain map",
            BrushKind::RaiseUplift => "raise uplift",
            BrushKind::LowerUplift => "lower uplift",
        }
    }

    /// The field a brush edits.
    pub fn field(self) -> Field {
        match self {
            BrushKind::Raise | BrushKind::Lower | BrushKind::Smooth | BrushKind::Flatten => Field::Terrain,
            BrushKind::AddWater | BrushKind::RemoveWater => Field::Water,
            BrushKind::Hardness => Field::Hardness,
            BrushKind::Rain => Field::Rain,
            BrushKind::RaiseUplift | BrushKind::LowerUplift => Field::Uplift,
        }
    }

    /// Whether `strength` is metres (else a share per dab, 0..1).
    pub fn strength_in_metres(self) -> bool {
        matches!(self, BrushKind::Raise | BrushKind::Lower | BrushKind::AddWater | BrushKind::RemoveWater)
    }
}

/// A field of the state brushes edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// Terrain height, m.
    Terrain,
    /// Water depth, m.
    Water,
    /// Hardness `R`.
    Hardness,
    /// Rain map, 0..1.
    Rain,
    /// The stream-power model's uplift map (multiplier of the uplift rate).
    Uplift,
}

/// What brushes paint on: the grid state's fields, and the uplift map of the stream-power model.
pub struct Canvas<'a> {
    /// Terrain, water, hardness and rain.
    pub state: &'a mut State,
    /// Uplift multiplier per cell.
    pub uplift: &'a mut Vec<f32>,
}

/// The field's values (the rain map is created, without rain, if missing).
pub fn field_mut<'a>(canvas: &'a mut Canvas<'_>, f: Field) -> &'a mut Vec<f32> {
    let st = &mut *canvas.state;
    match f {
        Field::Uplift => canvas.uplift,
        Field::Terrain => &mut st.terrain,
        Field::Water => &mut st.water,
        Field::Hardness => &mut st.hardness,
        Field::Rain => {
            let n = st.width * st.height;
            st.rain_map.get_or_insert_with(|| vec![0.0; n])
        }
    }
}

/// A brush's settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Brush {
    /// What it paints.
    pub kind: BrushKind,
    /// Radius, cells (> 0).
    pub radius: f32,
    /// Metres per dab (raise, lower, water) or share per dab (0..1, the others).
    pub strength: f32,
    /// Target of the hardness and rain brushes (0..1).
    pub value: f32,
}

impl Default for Brush {
    fn default() -> Self {
        Self { kind: BrushKind::Raise, radius: 12.0, strength: 1.0, value: 0.5 }
    }
}

/// A dab's weight at distance `d` from the centre: smooth, 1 at the centre, 0 from `radius` on.
pub fn falloff(d: f32, radius: f32) -> f32 {
    if radius <= 0.0 || d >= radius {
        return 0.0;
    }
    let t = 1.0 - d / radius;
    t * t * (3.0 - 2.0 * t)
}

/// Cells a dab at `(x, y)` (cells; cell `(c, r)` has its centre at `(c + 0.5, r + 0.5)`) can touch:
/// `(c0, r0, c1, r1)`, exclusive ends, clipped to the grid. `None` if it touches none.
pub fn dab_rect(width: usize, height: usize, x: f32, y: f32, radius: f32) -> Option<(usize, usize, usize, usize)> {
    let c0 = (x - radius).floor().max(0.0);
    let r0 = (y - radius).floor().max(0.0);
    let c1 = (x + radius).ceil().min(width as f32);
    let r1 = (y + radius).ceil().min(height as f32);
    if !(c0 < c1 && r0 < r1) {
        return None;
    }
    Some((c0 as usize, r0 as usize, c1 as usize, r1 as usize))
}

/// Applies one dab of `brush` at `(x, y)` (cells). `flatten_to` is the flatten brush's target
/// height. Returns whether a cell was inside the disc.
pub fn dab(canvas: &mut Canvas<'_>, brush: &Brush, x: f32, y: f32, flatten_to: f32) -> bool {
    let (w, h) = (canvas.state.width, canvas.state.height);
    let Some((c0, r0, c1, r1)) = dab_rect(w, h, x, y, brush.radius) else { return false };
    let s = brush.strength;
    // the smoothing brush reads the heights before the dab
    let before: Option<Vec<f32>> = (brush.kind == BrushKind::Smooth).then(|| canvas.state.terrain.clone());
    let field = field_mut(canvas, brush.kind.field());
    let mut touched = false;
    for r in r0..r1 {
        for c in c0..c1 {
            let (dx, dy) = (c as f32 + 0.5 - x, r as f32 + 0.5 - y);
            let wgt = falloff((dx * dx + dy * dy).sqrt(), brush.radius);
            if wgt <= 0.0 {
                continue;
            }
            touched = true;
            let i = r * w + c;
            let v = field[i];
            field[i] = match brush.kind {
                BrushKind::Raise => v + s * wgt,
                BrushKind::Lower => v - s * wgt,
                BrushKind::Smooth => {
                    let old = before.as_deref().unwrap_or(&[]);
                    let mean = neighbourhood_mean(old, w, h, r, c);
                    v + (mean - v) * (s * wgt).clamp(0.0, 1.0)
                }
                BrushKind::Flatten => v + (flatten_to - v) * (s * wgt).clamp(0.0, 1.0),
                BrushKind::AddWater => v + s * wgt,
                BrushKind::RemoveWater => (v - s * wgt).max(0.0),
                // hardness is resistance: painting 1 makes rock that erodes least
                BrushKind::Hardness => {
                    let target = brush.value.clamp(0.0, 1.0);
                    (v + (target - v) * (s * wgt).clamp(0.0, 1.0)).clamp(0.0, 1.0)
                }
                BrushKind::Rain => (v + (brush.value.clamp(0.0, 1.0) - v) * (s * wgt).clamp(0.0, 1.0)).clamp(0.0, 1.0),
                BrushKind::RaiseUplift => v + s * wgt,
                BrushKind::LowerUplift => (v - s * wgt).max(0.0),
            };
        }
    }
    touched
}

/// Mean of the 3 x 3 neighbourhood of `(r, c)` inside the grid.
fn neighbourhood_mean(v: &[f32], w: usize, h: usize, r: usize, c: usize) -> f32 {
    if v.len() != w * h {
        return 0.0;
    }
    let (mut sum, mut n) = (0.0f32, 0.0f32);
    for rr in r.saturating_sub(1)..(r + 2).min(h) {
        for cc in c.saturating_sub(1)..(c + 2).min(w) {
            sum += v[rr * w + cc];
            n += 1.0;
        }
    }
    sum / n
}

/// Dab positions along a stroke segment from `a` to `b` (cells), spaced a quarter radius apart,
/// `b` included, `a` not (it had its dab).
pub fn dabs_between(a: (f32, f32), b: (f32, f32), radius: f32) -> Vec<(f32, f32)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt();
    let spacing = (radius * 0.25).max(0.5);
    let n = ((len / spacing).ceil() as usize).clamp(1, 10_000);
    (1..=n).map(|k| (a.0 + dx * k as f32 / n as f32, a.1 + dy * k as f32 / n as f32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn falloff_is_one_at_the_centre_and_zero_from_the_radius() {
        assert_eq!(falloff(0.0, 5.0), 1.0);
        assert_eq!(falloff(5.0, 5.0), 0.0);
        assert_eq!(falloff(7.0, 5.0), 0.0);
        assert!(falloff(2.5, 5.0) > 0.4 && falloff(2.5, 5.0) < 0.6);
    }

    #[test]
    fn dabs_cover_a_segment_evenly() {
        let d = dabs_between((0.0, 0.0), (10.0, 0.0), 4.0);
        assert_eq!(d.len(), 10);
        assert_eq!(*d.last().unwrap_or(&(0.0, 0.0)), (10.0, 0.0));
    }
}
