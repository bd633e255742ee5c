//! The benchmarks as pictures, written as SVG (readable in any browser or
//! image viewer, and embeddable in the docs): the cactus plot solver
//! communities compare solvers with (games solved against time, one line
//! per run or mode), and a bar chart of arena scores with their 95%
//! intervals. Drawn with `plotters`.
//!
//! The plots take plain values this module defines ([`Series`] of
//! [`Solved`] games, [`Bar`]s): the benchmarks turn their rows into them.

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// What a cactus plot's y axis shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeAxis {
    /// The time to solve the first n games, fastest first.
    Cumulative,
    /// The n-th fastest game's own time, on a log scale.
    PerGame,
}

/// A game a run solved: the mode that solved it and its time, in seconds.
#[derive(Clone, Debug)]
pub struct Solved {
    pub mode: String,
    pub seconds: f64,
}

/// One line of a cactus plot: a label and the times of the games it solved.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub times: Vec<f64>,
}

impl Series {
    /// The games a run solved, as one line.
    pub fn new(label: &str, solved: &[Solved]) -> Series {
        Series {
            label: label.to_string(),
            times: solved.iter().map(|s| s.seconds).collect(),
        }
    }

    /// One series per mode that solved games in a run (`full`,
    /// `incremental`, ...), for a run whose modes are compared.
    pub fn per_mode(solved: &[Solved]) -> Vec<Series> {
        let mut modes: Vec<&str> = solved.iter().map(|s| s.mode.as_str()).collect();
        modes.sort();
        modes.dedup();
        modes
            .into_iter()
            .map(|m| {
                let of_mode: Vec<Solved> = solved.iter().filter(|s| s.mode == m).cloned().collect();
                Series::new(m, &of_mode)
            })
            .collect()
    }
}

/// One bar of [`arena_bars`]: a mean score (0..100) with the half width of its
/// 95% interval, labelled; bars of one `player` share a colour.
#[derive(Clone, Debug)]
pub struct Bar {
    pub label: String,
    pub player: String,
    pub mean: f64,
    pub ci95: f64,
}

const SIZE: (u32, u32) = (900, 560);

fn colour(i: usize) -> RGBColor {
    const COLOURS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    COLOURS[i % COLOURS.len()]
}

fn failed<E: std::fmt::Debug>(out: &Path) -> impl FnOnce(E) -> anyhow::Error + '_ {
    move |e| anyhow!("cannot draw {}: {e:?}", out.display())
}

/// Draws the cactus plot of `series` to `out`: x the number of games solved,
/// y the time, one line (and a point per solved game) per series.
pub fn cactus(series: &[Series], axis: TimeAxis, title: &str, out: &Path) -> Result<()> {
    let lines: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            let mut times = s.times.clone();
            times.sort_by(f64::total_cmp);
            let mut sum = 0.0;
            times
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    sum += t;
                    let y = match axis {
                        TimeAxis::Cumulative => sum,
                        TimeAxis::PerGame => t.max(0.001),
                    };
                    ((i + 1) as f64, y)
                })
                .collect()
        })
        .collect();
    let x_max = lines.iter().map(Vec::len).max().unwrap_or(0).max(1) as f64 + 0.5;
    let y_max = lines
        .iter()
        .flatten()
        .map(|p| p.1)
        .fold(0.0f64, f64::max)
        .max(0.01)
        * 1.1;
    let root = SVGBackend::new(out, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(failed(out))?;
    let y_desc = match axis {
        TimeAxis::Cumulative => "seconds to solve the first n games",
        TimeAxis::PerGame => "seconds for the n-th fastest game (log)",
    };
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70);
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_label_formatter(&|x| format!("{x:.0}"))
                .x_desc("games solved")
                .y_desc(y_desc)
                .draw()
                .map_err(failed(out))?;
            for (i, (s, pts)) in series.iter().zip(&lines).enumerate() {
                let c = colour(i);
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2)))
                    .map_err(failed(out))?
                    .label(format!("{} ({} solved)", s.label, pts.len()))
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))
                    .map_err(failed(out))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(failed(out))?;
        }};
    }
    match axis {
        TimeAxis::Cumulative => draw!(builder
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)
            .map_err(failed(out))?),
        TimeAxis::PerGame => draw!(builder
            .build_cartesian_2d(0.0..x_max, (0.001..y_max).log_scale())
            .map_err(failed(out))?),
    }
    root.present().map_err(failed(out))?;
    Ok(())
}

/// Draws each bar (an arena result: game, player and opponent) as a
/// horizontal bar with its 95% interval, the first bar on top, one colour per
/// player measured.
pub fn arena_bars(bars: &[Bar], title: &str, out: &Path) -> Result<()> {
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    let mut players: Vec<&str> = bars.iter().map(|b| b.player.as_str()).collect();
    players.sort();
    players.dedup();
    let n = bars.len().max(1);
    // Bar i at height n - 1 - i: the first result on top.
    let label_of = |y: &f64| -> String {
        let i = y.round();
        if (y - i).abs() > 1e-6 || i < 0.0 || i >= n as f64 {
            return String::new();
        }
        labels.get(n - 1 - i as usize).cloned().unwrap_or_default()
    };
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(10) as u32;
    let height = (120 + 34 * n as u32).max(300);
    let root = SVGBackend::new(out, (SIZE.0, height)).into_drawing_area();
    root.fill(&WHITE).map_err(failed(out))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(20 + 7 * longest)
        .build_cartesian_2d(0.0..100.0, -0.5..(n as f64 - 0.5))
        .map_err(failed(out))?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .x_desc("mean score of the player, with its 95% interval")
        .draw()
        .map_err(failed(out))?;
    for (i, r) in bars.iter().enumerate() {
        let y = (n - 1 - i) as f64;
        let c = colour(players.iter().position(|p| *p == r.player).unwrap_or(0));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - 0.35), (r.mean, y + 0.35)],
                c.filled(),
            )))
            .map_err(failed(out))?;
        let (lo, hi) = ((r.mean - r.ci95).max(0.0), (r.mean + r.ci95).min(100.0));
        let whisker = [
            vec![(lo, y), (hi, y)],
            vec![(lo, y - 0.15), (lo, y + 0.15)],
            vec![(hi, y - 0.15), (hi, y + 0.15)],
        ];
        chart
            .draw_series(
                whisker
                    .into_iter()
                    .map(|p| PathElement::new(p, BLACK.stroke_width(2))),
            )
            .map_err(failed(out))?;
    }
    root.present().map_err(failed(out))?;
    Ok(())
}
