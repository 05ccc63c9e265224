//! Keys: the prompt editor, the help popup, and every action of the key map. Every action
//! answers visibly, on the screen or in the status line, also when it cannot do anything.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::prompt::PromptKind;
use super::{dim3, App, Cmd, Pair, Phase, Screen};
use crate::tui::keymap::{self, Action, Scope};

impl App {
    pub(super) fn on_key(&mut self, k: KeyEvent) -> Vec<Cmd> {
        if k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL) {
            return self.quit_all();
        }
        // `r` again confirms the replacement of an opened sweep it asked about (`start_tune`);
        // any other key forgets the question.
        if let Some(asked) = self.replace_asked.take() {
            let plain = self.prompt.is_none()
                && self.tune_form.editing.is_none()
                && !self.help
                && !self.picking;
            if plain && keymap::lookup(self.scope(), &k) == Some(Action::TuneStart) {
                self.replace_asked = Some(asked);
            }
        }
        if self.prompt.is_some() {
            return self.on_prompt_key(k);
        }
        if self.tune_form.editing.is_some() {
            self.on_tune_edit_key(k);
            return vec![];
        }
        if self.help {
            self.on_help_key(k);
            return vec![];
        }
        // Enter on the Replay screen steps through the leaderboard (its title says so; no
        // binding: the screen has no other use for Enter).
        if k.code == KeyCode::Enter && self.screen == Screen::Replay && self.leaderboard.is_some() {
            self.leaderboard_next();
            return vec![];
        }
        match keymap::lookup(self.scope(), &k) {
            Some(a) if self.picking => self.on_picker_action(a),
            Some(a) => self.on_action(a),
            None => {
                // A printable key that means nothing here says so (rather than nothing at all);
                // modifier combinations and terminal noise stay silent.
                if let KeyCode::Char(c) = k.code {
                    if !k
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
                        && !c.is_control()
                    {
                        self.set_status(
                            format!(
                                "`{}` does nothing on the {} screen (? lists the keys)",
                                rr_format::text::visible(&c.to_string()),
                                match self.picking {
                                    true => "record directories",
                                    false => self.screen.title(),
                                }
                            ),
                            false,
                        );
                    }
                }
                vec![]
            }
        }
    }

    fn on_help_key(&mut self, k: KeyEvent) {
        match keymap::lookup(Scope::Global, &k) {
            Some(Action::Help | Action::Back | Action::Quit) => {
                self.help = false;
                self.help_scroll = 0;
            }
            Some(a) => self.scroll_help(a),
            None => {}
        }
    }

    /// Lines of the help popup that fit on screen.
    pub fn help_rows(&self) -> usize {
        keymap::help_popup_height(self.height, self.width).saturating_sub(2) as usize
    }

    pub(super) fn scroll_help(&mut self, a: Action) {
        let lines = keymap::help_rows(keymap::help_popup_width(self.width)).len();
        let last = lines.saturating_sub(self.help_rows());
        let page = self.help_rows().max(1);
        self.help_scroll = match a {
            Action::Up => self.help_scroll.saturating_sub(1),
            Action::Down => self.help_scroll + 1,
            Action::PageUp => self.help_scroll.saturating_sub(page),
            Action::PageDown => self.help_scroll + page,
            Action::Top => 0,
            Action::Bottom => last,
            _ => self.help_scroll,
        }
        .min(last);
    }

    fn switch(&mut self, screen: Screen) -> Vec<Cmd> {
        self.screen = screen;
        match screen {
            Screen::Descriptor => {
                self.descriptor_scroll = 0;
                self.ensure_inspection()
            }
            Screen::Snapshots => {
                let cur = self.current();
                if cur.is_some() && self.snap.as_ref().map(|s| s.instance) != cur {
                    return self.open_snapshots(Pair::InputOutput);
                }
                vec![]
            }
            _ => vec![],
        }
    }

    pub(super) fn move_selection(&mut self, delta: isize) -> Vec<Cmd> {
        if self.view.is_empty() {
            return vec![];
        }
        let n = self.view.len() as isize;
        self.selected = (self.selected as isize + delta).clamp(0, n - 1) as usize;
        if self.screen == Screen::Descriptor {
            return self.ensure_inspection();
        }
        vec![]
    }

    /// An action of the key map: each family goes to the handler of its screen or subject
    /// (this match names every action, so a new one cannot be forgotten).
    pub(super) fn on_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::Quit
            | Action::Help
            | Action::Back
            | Action::ScreenInstances
            | Action::ScreenDescriptor
            | Action::ScreenSnapshots
            | Action::ScreenReplay
            | Action::ScreenTune
            | Action::OpenTune
            | Action::ScreenProfile
            | Action::NextScreen
            | Action::PrevScreen
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
            | Action::Open => self.on_navigation_action(a),
            Action::Filter
            | Action::Sort
            | Action::ReverseSort
            | Action::RawNames
            | Action::Mark
            | Action::TextDiff
            | Action::MarkSweep
            | Action::TuneStartMarked => self.on_instance_list_action(a),
            Action::NextDiff
            | Action::PrevDiff
            | Action::Goto
            | Action::CyclePair
            | Action::CycleType
            | Action::CycleTypeBack
            | Action::Search
            | Action::SearchNext
            | Action::SearchPrev
            | Action::PickType
            | Action::Endian
            | Action::Squeeze => self.on_snapshot_action(a),
            Action::Replay
            | Action::Verify
            | Action::Cancel
            | Action::EditRepetitions
            | Action::EditGrid
            | Action::EditBlock
            | Action::EditTolerance
            | Action::EditCandidate
            | Action::EditImage
            | Action::EditBaseAddress
            | Action::Freeze
            | Action::Export => self.on_replay_action(a),
            Action::TuneStart
            | Action::TuneCancel
            | Action::TuneEdit
            | Action::TuneExport
            | Action::HeatLeft
            | Action::HeatRight
            | Action::HeatAxes
            | Action::TuneFront
            | Action::TunePickUp
            | Action::TunePickDown
            | Action::Profile
            | Action::ProfileBest
            | Action::ProfileCancel
            | Action::ProfileCandidate => self.on_tune_action(a),
        }
    }

    /// Quitting, help, going back, switching screens, scrolling and opening the selection.
    fn on_navigation_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::Quit => return self.quit_all(),
            Action::Help => {
                self.help = true;
                self.help_scroll = 0;
            }
            Action::Back => {
                if !self.filter.is_empty() && self.screen == Screen::Instances {
                    self.filter.clear();
                    self.refresh_view();
                } else if self.screen != Screen::Instances {
                    self.screen = Screen::Instances;
                } else if self.picker.is_some() {
                    return self.back_to_picker();
                }
                self.status = None;
            }
            Action::ScreenInstances => return self.switch(Screen::Instances),
            Action::ScreenDescriptor => return self.switch(Screen::Descriptor),
            Action::ScreenSnapshots => return self.switch(Screen::Snapshots),
            Action::ScreenReplay => return self.switch(Screen::Replay),
            Action::ScreenTune | Action::OpenTune => return self.switch(Screen::Tune),
            Action::ScreenProfile => return self.switch(Screen::Profile),
            Action::NextScreen | Action::PrevScreen => {
                let n = Screen::ALL.len();
                let i = Screen::ALL
                    .iter()
                    .position(|&s| s == self.screen)
                    .unwrap_or(0);
                let j = if a == Action::NextScreen {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                return self.switch(Screen::ALL[j]);
            }
            Action::Open if self.current().is_none() => {
                let why = if self.rows.is_empty() {
                    "no instance to open here"
                } else {
                    "no instance to open: the filter matches none (/ to change it)"
                };
                self.set_status(why.to_string(), true);
            }
            Action::Open => return self.switch(Screen::Snapshots),
            // Up, Down, PageUp, PageDown, Top, Bottom.
            _ => return self.scroll(a),
        }
        vec![]
    }

    /// The instance list's filter, order and names, and the marks that pick instances for the
    /// descriptor comparison and for sweeps one after the other.
    fn on_instance_list_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::Filter => {
                let f = self.filter.clone();
                self.open_prompt(PromptKind::Filter, f);
            }
            Action::Sort => {
                self.sort = self.sort.next();
                self.refresh_view();
                self.set_status(format!("sorted by {}", self.sort.label()), false);
            }
            Action::ReverseSort => {
                self.descending = !self.descending;
                self.refresh_view();
                let order = if self.descending {
                    "descending"
                } else {
                    "ascending"
                };
                self.set_status(format!("sorted by {}, {order}", self.sort.label()), false);
            }
            Action::RawNames => {
                self.raw_names = !self.raw_names;
                let names = if self.raw_names {
                    "raw (mangled) kernel names"
                } else {
                    "demangled kernel names"
                };
                self.set_status(names, false);
            }
            Action::Mark => return self.toggle_mark(),
            Action::TextDiff => self.toggle_text_diff(),
            Action::MarkSweep => self.toggle_sweep_mark(),
            Action::TuneStartMarked => return self.start_marked_tunes(),
            _ => {}
        }
        vec![]
    }

    /// The replay screen: replays and their cancelling, the settings' prompts (each opened
    /// with the value in force), the chart's freeze and the export.
    fn on_replay_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::Replay => return self.start_replay(false),
            Action::Verify => return self.start_replay(true),
            Action::Cancel => return self.cancel_replay(),
            Action::Freeze => self.toggle_freeze(),
            Action::Export => return self.export(),
            _ => self.open_setting_prompt(a),
        }
        vec![]
    }

    /// The prompt of the replay setting `a` edits, holding the setting's value in force.
    fn open_setting_prompt(&mut self, a: Action) {
        let settings = &self.settings;
        let (kind, text) = match a {
            Action::EditRepetitions => (PromptKind::Repetitions, settings.repetitions.to_string()),
            Action::EditGrid => (
                PromptKind::Grid,
                settings.grid.map(dim3).unwrap_or_default(),
            ),
            Action::EditBlock => (
                PromptKind::Block,
                settings.block.map(dim3).unwrap_or_default(),
            ),
            Action::EditTolerance => (
                PromptKind::Tolerance,
                settings.tolerance.map(|c| c.to_spec()).unwrap_or_default(),
            ),
            Action::EditCandidate => (
                PromptKind::Candidate,
                settings
                    .candidate
                    .as_ref()
                    .map(crate::cli::candidate_text)
                    .unwrap_or_default(),
            ),
            Action::EditImage => (
                PromptKind::Image,
                settings
                    .supplied
                    .image
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            Action::EditBaseAddress => (
                PromptKind::BaseAddress,
                settings
                    .supplied
                    .base_address
                    .map(|a| format!("{a:#x}"))
                    .unwrap_or_default(),
            ),
            _ => return,
        };
        self.open_prompt(kind, text);
    }

    /// The tuning screen (sweeps, the heatmap, the table of the best) and the profile screen.
    fn on_tune_action(&mut self, a: Action) -> Vec<Cmd> {
        match a {
            Action::TuneStart => return self.start_tune(),
            Action::TuneCancel => return self.cancel_tune(),
            Action::TuneEdit => self.edit_tune_field(),
            Action::TuneExport => return self.export_tune(),
            Action::HeatLeft => self.scroll_heat(0, -1),
            Action::HeatRight => self.scroll_heat(0, 1),
            Action::HeatAxes => self.cycle_heat_axes(),
            Action::TuneFront => self.toggle_front(),
            Action::Profile => return self.start_profile(),
            Action::ProfileBest => return self.start_tuned_profile(),
            Action::TunePickUp => self.pick_tuned(-1),
            Action::TunePickDown => self.pick_tuned(1),
            Action::ProfileCancel => return self.cancel_profile(),
            Action::ProfileCandidate => return self.start_candidate_profile(),
            _ => {}
        }
        vec![]
    }

    /// `M`: mark or unmark the selection for a sweep of several instances.
    fn toggle_sweep_mark(&mut self) {
        let Some(i) = self.current() else { return };
        if !self.sweep_marks.remove(&i) {
            self.sweep_marks.insert(i);
        }
        let n = self.sweep_marks.len();
        self.set_status(
            format!("{n} instance(s) marked for a sweep (●): R on the tuning screen sweeps them one after the other"),
            false,
        );
    }

    fn toggle_mark(&mut self) -> Vec<Cmd> {
        self.mark = if self.mark == self.current() {
            None
        } else {
            self.current()
        };
        let cmds = self.ensure_inspection();
        let text = match self.mark {
            Some(i) => format!(
                "marked {}: the descriptor screen compares it with the selection",
                self.rows[i].json_file
            ),
            None => "mark cleared".into(),
        };
        self.set_status(text, false);
        cmds
    }

    /// The marked and selected instances line by line, or field by field again.
    fn toggle_text_diff(&mut self) {
        if self.mark.is_none() || self.mark == self.current() {
            self.set_status(
                "d compares the marked instance with the selected one line by line: mark one with m, then select another",
                true,
            );
            return;
        }
        self.descriptor_text_diff = !self.descriptor_text_diff;
        self.descriptor_scroll = 0;
        self.set_status(
            match self.descriptor_text_diff {
                true => "line by line: the decoded descriptors as `rr-tui diff A.json B.json` prints them (d: field by field)",
                false => "field by field (d: line by line)",
            },
            false,
        );
    }

    fn toggle_freeze(&mut self) {
        let Some(reps) = self
            .current()
            .and_then(|i| self.replays.get(&i))
            .map(|r| r.kernel_ns.len())
        else {
            self.set_status(
                "nothing to freeze: this instance has not been replayed",
                true,
            );
            return;
        };
        self.frozen = match self.frozen {
            Some(_) => None,
            None => Some(reps),
        };
        let text = match self.frozen {
            Some(n) => format!("chart frozen at {n} repetition(s); f goes live again"),
            None => "chart live".to_string(),
        };
        self.set_status(text, false);
    }

    fn cancel_replay(&mut self) -> Vec<Cmd> {
        let Some(i) = self.running.take() else {
            if std::mem::take(&mut self.replay_kept) {
                self.set_status(
                    "the kept replay process ended: its GPU memory is free",
                    false,
                );
                return vec![Cmd::CancelReplay];
            }
            if let Some(cmds) = self.cancel_leaderboard() {
                return cmds;
            }
            self.set_status("nothing to cancel: no replay is running", false);
            return vec![];
        };
        if let Some(r) = self.replays.get_mut(&i) {
            r.phase = Phase::Cancelled;
        }
        self.set_status("replay cancelled", false);
        vec![Cmd::CancelReplay]
    }

    fn scroll(&mut self, a: Action) -> Vec<Cmd> {
        let page = self.page();
        let step: isize = match a {
            Action::Up => -1,
            Action::Down => 1,
            Action::PageUp => -(page as isize),
            Action::PageDown => page as isize,
            _ => 0,
        };
        match self.screen {
            // The replay screen shows one instance and its settings (a grid override with D
            // was set for it): moving the selection from there would replay another kernel
            // with them, unseen.
            Screen::Replay => self.set_status(
                "nothing scrolls here: the instance to replay is chosen on the instances screen (1)",
                false,
            ),
            Screen::Instances => {
                return match a {
                    Action::Top => self.move_selection(-(self.selected as isize)),
                    Action::Bottom => self.move_selection(self.view.len() as isize),
                    _ => self.move_selection(step),
                }
            }
            Screen::Descriptor => {
                let last = self.descriptor_lines().saturating_sub(self.content_lines());
                self.descriptor_scroll = match a {
                    Action::Top => 0,
                    Action::Bottom => last,
                    _ => self.descriptor_scroll.saturating_add_signed(step),
                }
                .min(last);
            }
            Screen::Tune => self.tune_scroll(a),
            Screen::Profile => {}
            Screen::Snapshots => {
                let rows = self.snapshot_rows();
                if let Some(s) = self.snap.as_mut() {
                    match a {
                        Action::Top => s.to_top(),
                        Action::Bottom => s.to_bottom(rows),
                        _ if step > 0 => s.scroll_down(step as usize, rows),
                        _ => s.scroll_up(step.unsigned_abs()),
                    }
                }
            }
        }
        vec![]
    }
}
