//! The one key table: every key of every screen, with the words the help popup and the hint
//! bar show for it. Dispatch (`keymap::lookup`), the help overlay and the hint bar all read
//! this table and nothing else, so they cannot disagree; `keymap` holds what reads it.

use ratatui::crossterm::event::{KeyCode, KeyModifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Quit,
    Help,
    Back,
    ScreenInstances,
    ScreenDescriptor,
    ScreenSnapshots,
    ScreenReplay,
    NextScreen,
    PrevScreen,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Filter,
    Sort,
    ReverseSort,
    RawNames,
    Mark,
    TextDiff,
    NextDiff,
    PrevDiff,
    Goto,
    CyclePair,
    CycleType,
    CycleTypeBack,
    PickType,
    Search,
    SearchNext,
    SearchPrev,
    Endian,
    Squeeze,
    Replay,
    Verify,
    Cancel,
    EditRepetitions,
    EditGrid,
    EditBlock,
    EditTolerance,
    EditImage,
    EditCandidate,
    EditBaseAddress,
    Freeze,
    Export,
    ScreenTune,
    OpenTune,
    TuneStart,
    TuneCancel,
    TuneEdit,
    TuneExport,
    HeatLeft,
    HeatRight,
    HeatAxes,
    TuneFront,
    TunePickUp,
    TunePickDown,
    ScreenProfile,
    Profile,
    ProfileBest,
    ProfileCancel,
    ProfileCandidate,
    MarkSweep,
    TuneStartMarked,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Global,
    /// The record directories below a directory that holds none itself (`app::picker`).
    Picker,
    Instances,
    Descriptor,
    Snapshots,
    Replay,
    Tune,
    Profile,
}

pub struct Binding {
    pub scope: Scope,
    pub keys: &'static [(KeyCode, KeyModifiers)],
    pub label: &'static str,
    pub action: Action,
    pub description: &'static str,
    /// The hint bar's short word for it, if the hint bar shows it.
    pub hint: Option<&'static str>,
}

pub(super) const NONE: KeyModifiers = KeyModifiers::NONE;
pub(super) const CTRL: KeyModifiers = KeyModifiers::CONTROL;
pub(super) const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

macro_rules! b {
    ($scope:ident, [$($k:expr),+], $label:expr, $action:ident, $desc:expr, $hint:expr) => {
        Binding { scope: Scope::$scope, keys: &[$($k),+], label: $label, action: Action::$action, description: $desc, hint: $hint }
    };
}

pub static BINDINGS: &[Binding] = &[
    b!(
        Picker,
        [(KeyCode::Enter, NONE)],
        "Enter",
        Open,
        "open the record directory (Esc on its instance list comes back to this list)",
        Some("open")
    ),
    b!(
        Global,
        [(KeyCode::Char('q'), NONE), (KeyCode::Char('c'), CTRL)],
        "q",
        Quit,
        "quit (Ctrl-c always)",
        Some("quit")
    ),
    b!(
        Global,
        [(KeyCode::Char('?'), NONE), (KeyCode::F(1), NONE)],
        "?",
        Help,
        "this help",
        Some("help")
    ),
    b!(
        Global,
        [(KeyCode::Esc, NONE)],
        "Esc",
        Back,
        "close popup, clear filter, go back",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('1'), NONE)],
        "1",
        ScreenInstances,
        "instances",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('2'), NONE)],
        "2",
        ScreenDescriptor,
        "descriptor",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('3'), NONE)],
        "3",
        ScreenSnapshots,
        "snapshots",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('4'), NONE)],
        "4",
        ScreenReplay,
        "replay",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('5'), NONE)],
        "5",
        ScreenTune,
        "tuning",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('6'), NONE)],
        "6",
        ScreenProfile,
        "profile",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('P'), SHIFT), (KeyCode::Char('P'), NONE)],
        "P",
        Profile,
        "profile the selected instance with Nsight Compute (one repetition, in the background)",
        Some("profile")
    ),
    b!(
        Global,
        [(KeyCode::Tab, NONE)],
        "Tab",
        NextScreen,
        "next screen",
        Some("screen")
    ),
    b!(
        Global,
        [(KeyCode::BackTab, SHIFT), (KeyCode::BackTab, NONE)],
        "S-Tab",
        PrevScreen,
        "previous screen",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('j'), NONE), (KeyCode::Down, NONE)],
        "j/↓",
        Down,
        "down",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('k'), NONE), (KeyCode::Up, NONE)],
        "k/↑",
        Up,
        "up",
        None
    ),
    b!(
        Global,
        [(KeyCode::PageDown, NONE), (KeyCode::Char('d'), CTRL)],
        "PgDn",
        PageDown,
        "page down",
        None
    ),
    b!(
        Global,
        [(KeyCode::PageUp, NONE), (KeyCode::Char('u'), CTRL)],
        "PgUp",
        PageUp,
        "page up",
        None
    ),
    b!(
        Global,
        [(KeyCode::Home, NONE), (KeyCode::Char('g'), NONE)],
        "g/Home",
        Top,
        "top",
        None
    ),
    b!(
        Global,
        [
            (KeyCode::End, NONE),
            (KeyCode::Char('G'), SHIFT),
            (KeyCode::Char('G'), NONE)
        ],
        "G/End",
        Bottom,
        "bottom",
        None
    ),
    b!(
        Global,
        [(KeyCode::Char('r'), NONE)],
        "r",
        Replay,
        "replay the selected instance",
        Some("replay")
    ),
    b!(
        Global,
        [(KeyCode::Char('v'), NONE)],
        "v",
        Verify,
        "replay and verify against .record_output",
        Some("verify")
    ),
    b!(
        Global,
        [(KeyCode::Char('c'), NONE)],
        "c",
        Cancel,
        "cancel the running replay, or end the kept one (frees GPU memory)",
        None
    ),
    b!(
        Instances,
        [(KeyCode::Enter, NONE)],
        "Enter",
        Open,
        "open the snapshot diff",
        Some("open")
    ),
    b!(
        Instances,
        [(KeyCode::Char('/'), NONE)],
        "/",
        Filter,
        "filter by kernel or file",
        Some("filter")
    ),
    b!(
        Instances,
        [(KeyCode::Char('s'), NONE)],
        "s",
        Sort,
        "sort by next column",
        Some("sort")
    ),
    b!(
        Instances,
        [(KeyCode::Char('S'), SHIFT), (KeyCode::Char('S'), NONE)],
        "S",
        ReverseSort,
        "reverse the sort",
        Some("reverse")
    ),
    b!(
        Instances,
        [(KeyCode::Char('R'), SHIFT), (KeyCode::Char('R'), NONE)],
        "R",
        RawNames,
        "raw (mangled) kernel names",
        Some("raw names")
    ),
    b!(
        Instances,
        [(KeyCode::Char('m'), NONE)],
        "m",
        Mark,
        "mark for a descriptor diff",
        Some("mark")
    ),
    b!(
        Instances,
        [(KeyCode::Char('M'), SHIFT), (KeyCode::Char('M'), NONE)],
        "M",
        MarkSweep,
        "mark / unmark for a sweep of several instances (R on the tuning screen)",
        Some("sweep mark")
    ),
    b!(
        Instances,
        [(KeyCode::Char('u'), NONE)],
        "u",
        OpenTune,
        "tune: sweep launch configurations",
        Some("tune")
    ),
    b!(
        Descriptor,
        [(KeyCode::Char('u'), NONE)],
        "u",
        OpenTune,
        "tune: sweep launch configurations",
        Some("tune")
    ),
    b!(
        Descriptor,
        [(KeyCode::Char('m'), NONE)],
        "m",
        Mark,
        "mark / unmark for a side-by-side diff",
        Some("mark")
    ),
    b!(
        Descriptor,
        [(KeyCode::Char('d'), NONE)],
        "d",
        TextDiff,
        "marked and selected: line by line (the decoded descriptors as `rr-tui diff A.json B.json` prints them) or field by field",
        Some("lines")
    ),
    b!(
        Descriptor,
        [(KeyCode::Char('R'), SHIFT), (KeyCode::Char('R'), NONE)],
        "R",
        RawNames,
        "raw kernel names",
        Some("raw names")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('n'), NONE)],
        "n",
        NextDiff,
        "next difference",
        Some("next diff")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('N'), SHIFT), (KeyCode::Char('N'), NONE)],
        "N",
        PrevDiff,
        "previous difference",
        Some("prev diff")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char(':'), NONE), (KeyCode::Char('g'), CTRL)],
        ":",
        Goto,
        "go to offset, 0xADDRESS or argN",
        Some("go to")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('p'), NONE)],
        "p",
        CyclePair,
        "input/output/replay pair",
        Some("pair")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('t'), NONE)],
        "t",
        CycleType,
        "typed view: the next type (hex, u8 … f64, then hex again)",
        Some("type")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('T'), SHIFT), (KeyCode::Char('T'), NONE)],
        "T",
        CycleTypeBack,
        "typed view: the previous type (f32 is two presses from hex)",
        Some("type back")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('/'), NONE)],
        "/",
        Search,
        "search both sides for a value of the view's type, or bytes (hex view, or x:de ad be ef), from the cursor on",
        Some("search")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('>'), NONE), (KeyCode::Char('>'), SHIFT)],
        ">",
        SearchNext,
        "the next match of the search",
        Some("next match")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('<'), NONE), (KeyCode::Char('<'), SHIFT)],
        "<",
        SearchPrev,
        "the previous match of the search",
        Some("prev match")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('i'), NONE)],
        "i",
        PickType,
        "interpret as: a type by name (hex, u8, i8, u16, i16, u32, i32, u64, i64, f16, bf16, f32, f64)",
        Some("type by name")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('e'), NONE)],
        "e",
        Endian,
        "toggle endianness",
        Some("endian")
    ),
    b!(
        Snapshots,
        [(KeyCode::Char('z'), NONE)],
        "z",
        Squeeze,
        "squeeze equal rows",
        Some("squeeze")
    ),
    // The replay keys are global; the Replay screen repeats them so that its hint bar lists
    // them first (the help popup lists them once, under Everywhere).
    b!(
        Replay,
        [(KeyCode::Char('r'), NONE)],
        "r",
        Replay,
        "replay the selected instance",
        Some("replay")
    ),
    b!(
        Replay,
        [(KeyCode::Char('v'), NONE)],
        "v",
        Verify,
        "replay and verify against .record_output",
        Some("verify")
    ),
    b!(
        Replay,
        [(KeyCode::Char('c'), NONE)],
        "c",
        Cancel,
        "cancel the running replay, or end the kept one (frees GPU memory)",
        Some("cancel")
    ),
    b!(
        Replay,
        [(KeyCode::Char('n'), NONE)],
        "n",
        EditRepetitions,
        "number of repetitions",
        Some("reps")
    ),
    b!(
        Replay,
        [(KeyCode::Char('D'), SHIFT), (KeyCode::Char('D'), NONE)],
        "D",
        EditGrid,
        "grid override XxYxZ (grid Dimensions; G is bottom everywhere)",
        Some("grid")
    ),
    b!(
        Replay,
        [(KeyCode::Char('B'), SHIFT), (KeyCode::Char('B'), NONE)],
        "B",
        EditBlock,
        "block override XxYxZ",
        Some("block")
    ),
    b!(
        Replay,
        [(KeyCode::Char('T'), SHIFT), (KeyCode::Char('T'), NONE)],
        "T",
        EditTolerance,
        "tolerance, e.g. f32:rtol=1e-5",
        Some("tolerance")
    ),
    b!(
        Replay,
        [(KeyCode::Char('I'), SHIFT), (KeyCode::Char('I'), NONE)],
        "I",
        EditImage,
        "legacy records: the device image file (--image)",
        Some("image")
    ),
    b!(
        Replay,
        [(KeyCode::Char('C'), SHIFT), (KeyCode::Char('C'), NONE)],
        "C",
        EditCandidate,
        "A/B: a candidate kernel file; r/v then replay both and compare",
        Some("A/B")
    ),
    b!(
        Replay,
        [(KeyCode::Char('A'), SHIFT), (KeyCode::Char('A'), NONE)],
        "A",
        EditBaseAddress,
        "LLVM 16–17 records: where memory starts (--base-address)",
        Some("address")
    ),
    b!(
        Replay,
        [(KeyCode::Char('f'), NONE)],
        "f",
        Freeze,
        "freeze the chart",
        Some("freeze")
    ),
    b!(
        Replay,
        [(KeyCode::Char('x'), NONE)],
        "x",
        Export,
        "export timings (CSV + JSON)",
        Some("export")
    ),
    // The tuning screen: j/k choose a field of the form (see TUNE_NOTES).
    b!(
        Tune,
        [(KeyCode::Enter, NONE)],
        "Enter",
        TuneEdit,
        "edit the field (choices cycle)",
        Some("edit")
    ),
    b!(
        Tune,
        [(KeyCode::Char('r'), NONE)],
        "r",
        TuneStart,
        "start the sweep",
        Some("start")
    ),
    b!(
        Tune,
        [(KeyCode::Char('R'), SHIFT), (KeyCode::Char('R'), NONE)],
        "R",
        TuneStartMarked,
        "sweep every instance marked with M, one after the other, with this form",
        Some("marked")
    ),
    b!(
        Tune,
        [(KeyCode::Char('c'), NONE)],
        "c",
        TuneCancel,
        "cancel the sweep",
        Some("cancel")
    ),
    b!(
        Tune,
        [(KeyCode::Char('x'), NONE)],
        "x",
        TuneExport,
        "export the results (CSV + JSON)",
        Some("export")
    ),
    b!(
        Tune,
        [(KeyCode::Char('h'), NONE), (KeyCode::Left, NONE)],
        "h/←",
        HeatLeft,
        "heatmap: scroll left",
        Some("left")
    ),
    b!(
        Tune,
        [(KeyCode::Char('l'), NONE), (KeyCode::Right, NONE)],
        "l/→",
        HeatRight,
        "heatmap: scroll right",
        Some("right")
    ),
    b!(
        Tune,
        [(KeyCode::Char('a'), NONE)],
        "a",
        HeatAxes,
        "heatmap: the next two axes that vary (grid, block, smem, regs, defines)",
        Some("axes")
    ),
    b!(
        Tune,
        [(KeyCode::Char('p'), NONE)],
        "p",
        TuneFront,
        "table: the best configurations ↔ the Pareto front of time against energy",
        Some("front")
    ),
    b!(
        Tune,
        [(KeyCode::Char('['), NONE)],
        "[",
        TunePickUp,
        "table: pick the configuration above (P profiles it)",
        Some("pick ↑")
    ),
    b!(
        Tune,
        [(KeyCode::Char(']'), NONE)],
        "]",
        TunePickDown,
        "table: pick the configuration below (P profiles it)",
        Some("pick ↓")
    ),
    b!(
        Tune,
        [(KeyCode::Char('P'), SHIFT), (KeyCode::Char('P'), NONE)],
        "P",
        ProfileBest,
        "profile the picked configuration (the best unless [/] picked another) beside the recorded one",
        Some("profile")
    ),
    b!(
        Profile,
        [
            (KeyCode::Char('r'), NONE),
            (KeyCode::Char('P'), SHIFT),
            (KeyCode::Char('P'), NONE)
        ],
        "r/P",
        Profile,
        "profile the recorded configuration (again)",
        Some("profile")
    ),
    b!(
        Profile,
        [(KeyCode::Char('c'), NONE)],
        "c",
        ProfileCancel,
        "cancel the running profile",
        Some("cancel")
    ),
    b!(
        Profile,
        [(KeyCode::Char('b'), NONE)],
        "b",
        ProfileCandidate,
        "profile the A/B candidate (C on the replay screen) beside the recorded kernel",
        Some("candidate")
    ),
];
