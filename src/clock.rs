//! Clocks: the one parser of a number of seconds into a [`Duration`], and the
//! one rule from a clock to the time a player has to answer.
//!
//! Every duration flag of every command (as clap's `value_parser`) and every
//! clock of a protocol message go through [`parse`], so all of them refuse the
//! same values with the same words: text that is not a number, NaN, a negative
//! number, infinity and anything past [`MAX_SECONDS`]; zero too where zero
//! means nothing. [`answer_within`] turns a clock and what is kept back from it
//! (a [`Margin`]) into the time to answer; the player's server (START, PLAY,
//! STOP, PREVIEW), its match and worker, and the referee's in-process players
//! all ask it.
//!
//! This module depends on `std` alone, so that any layer may use it.

use std::fmt;
use std::time::Duration;

/// The longest duration accepted, in seconds (about 116 days): longer than
/// any clock or budget anyone waits for, and far below where adding it to an
/// `Instant` could overflow.
pub const MAX_SECONDS: f64 = 1e7;

/// The unit a number is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Milliseconds,
}

impl Unit {
    fn per_second(self) -> f64 {
        match self {
            Unit::Seconds => 1.0,
            Unit::Milliseconds => 1e3,
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unit::Seconds => "seconds",
            Unit::Milliseconds => "milliseconds",
        })
    }
}

/// Whether zero is a meaningful duration where the value is used: a margin of
/// zero keeps nothing back, but a timeout or budget of zero leaves no time at
/// all, which is never what was meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zero {
    Accepted,
    Refused,
}

/// Why a text is not an accepted duration (the message clap prints after the
/// flag and its value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClockError {
    NotANumber,
    Negative,
    Zero,
    TooLong(Unit),
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockError::NotANumber => f.write_str("not a number"),
            ClockError::Negative => f.write_str("a duration cannot be negative"),
            ClockError::Zero => f.write_str("a duration of zero leaves no time: give more"),
            ClockError::TooLong(unit) => write!(
                f,
                "longer than the longest accepted, {} {unit}",
                MAX_SECONDS * unit.per_second()
            ),
        }
    }
}

impl std::error::Error for ClockError {}

/// A number of `unit`s (`2`, `0.5`, `1e3`) as a duration; see the module's
/// header for what is refused.
pub fn parse(text: &str, unit: Unit, zero: Zero) -> Result<Duration, ClockError> {
    let n: f64 = text.trim().parse().map_err(|_| ClockError::NotANumber)?;
    if n.is_nan() {
        return Err(ClockError::NotANumber);
    }
    if n < 0.0 {
        return Err(ClockError::Negative);
    }
    let seconds = n / unit.per_second();
    if seconds > MAX_SECONDS {
        return Err(ClockError::TooLong(unit));
    }
    // Checked on the duration, not the number: a positive number below a
    // nanosecond is a zero duration too.
    let d = Duration::from_secs_f64(seconds);
    if d.is_zero() && zero == Zero::Refused {
        return Err(ClockError::Zero);
    }
    Ok(d)
}

/// A duration flag in seconds (clap's `value_parser`): more than zero.
pub fn seconds(text: &str) -> Result<Duration, ClockError> {
    parse(text, Unit::Seconds, Zero::Refused)
}

/// A margin flag in milliseconds (clap's `value_parser`): zero keeps nothing
/// back.
pub fn margin_ms(text: &str) -> Result<Duration, ClockError> {
    parse(text, Unit::Milliseconds, Zero::Accepted)
}

/// What a player keeps back from a clock for what happens between its answer
/// and the moment the other side reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Margin {
    /// A player answering over the network (`ggp-asp serve`, `--margin-ms`):
    /// a fixed time for the reply to travel, however long the clock. It is
    /// at most half the clock, so that a margin set for long clocks still
    /// leaves half of a short one to think.
    Network(Duration),
    /// A player inside the referee's process (`arena`): 50 ms and a tenth of
    /// the clock, with no floor. Nothing travels, but the referee times the
    /// answer on a machine that every player of the match shares while they
    /// all think at once, and a search notices its deadline only at its next
    /// step; both delays grow with the work done, hence a share of the clock.
    /// There is no floor of half the clock: under 125 ms the margin takes
    /// more than half (all of it up to 55 ms), because on a shared machine
    /// such a clock is mostly scheduling delay, and a player that answers at
    /// once with what it has is on time where one that thinks is late.
    InProcess,
}

/// The fixed part of [`Margin::InProcess`]: the referee's own work around a
/// move (sending, timing, checking it is legal).
const IN_PROCESS_FIXED: Duration = Duration::from_millis(50);

/// How long after a message with `clock` arrived the answer must be out: the
/// clock less the margin.
pub fn answer_within(clock: Duration, margin: Margin) -> Duration {
    match margin {
        Margin::Network(m) if m * 2 < clock => clock - m,
        Margin::Network(_) => clock / 2,
        Margin::InProcess => clock.saturating_sub(IN_PROCESS_FIXED + clock / 10),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_numbers_of_seconds_and_milliseconds() {
        assert_eq!(seconds("2"), Ok(Duration::from_secs(2)));
        assert_eq!(seconds("0.5"), Ok(ms(500)));
        assert_eq!(seconds("1e3"), Ok(Duration::from_secs(1000)));
        assert_eq!(seconds(" 7 "), Ok(Duration::from_secs(7)));
        assert_eq!(margin_ms("500"), Ok(ms(500)));
        assert_eq!(margin_ms("0"), Ok(Duration::ZERO));
        assert_eq!(
            parse("0", Unit::Seconds, Zero::Accepted),
            Ok(Duration::ZERO)
        );
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        for text in ["", "soon", "nan", "NaN", "1s"] {
            assert_eq!(seconds(text), Err(ClockError::NotANumber), "{text:?}");
        }
        for text in ["-1", "-0.001", "-inf"] {
            assert_eq!(seconds(text), Err(ClockError::Negative), "{text:?}");
            assert_eq!(margin_ms(text), Err(ClockError::Negative), "{text:?}");
        }
        for text in ["inf", "1e300", "10000001"] {
            assert_eq!(
                seconds(text),
                Err(ClockError::TooLong(Unit::Seconds)),
                "{text:?}"
            );
        }
        assert_eq!(
            margin_ms("1e11"),
            Err(ClockError::TooLong(Unit::Milliseconds))
        );
    }

    #[test]
    fn bounds_are_inclusive_and_zero_only_where_accepted() {
        assert_eq!(seconds("1e7"), Ok(Duration::from_secs(10_000_000)));
        assert_eq!(margin_ms("1e10"), Ok(Duration::from_secs(10_000_000)));
        assert_eq!(seconds("0"), Err(ClockError::Zero));
        assert_eq!(seconds("-0"), Err(ClockError::Zero));
        // Below a nanosecond is zero as a duration.
        assert_eq!(seconds("1e-10"), Err(ClockError::Zero));
        assert_eq!(seconds("1e-9"), Ok(Duration::from_nanos(1)));
    }

    #[test]
    fn errors_read_as_one_clause() {
        assert_eq!(
            ClockError::TooLong(Unit::Seconds).to_string(),
            "longer than the longest accepted, 10000000 seconds"
        );
        assert_eq!(
            ClockError::TooLong(Unit::Milliseconds).to_string(),
            "longer than the longest accepted, 10000000000 milliseconds"
        );
        for e in [
            ClockError::NotANumber,
            ClockError::Negative,
            ClockError::Zero,
        ] {
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn network_answer_is_the_clock_less_the_margin() {
        let net = |m| Margin::Network(ms(m));
        assert_eq!(answer_within(ms(10_000), net(500)), ms(9_500));
        assert_eq!(answer_within(ms(1_001), net(500)), ms(501));
        assert_eq!(answer_within(ms(400), net(0)), ms(400));
    }

    #[test]
    fn network_answer_keeps_half_a_short_clock() {
        let net = |m| Margin::Network(ms(m));
        // A margin of half the clock or more: half the clock.
        assert_eq!(answer_within(ms(1_000), net(500)), ms(500));
        assert_eq!(answer_within(ms(400), net(500)), ms(200));
        assert_eq!(answer_within(ms(100), net(10_000)), ms(50));
        assert_eq!(answer_within(Duration::ZERO, net(500)), Duration::ZERO);
        assert_eq!(answer_within(Duration::ZERO, net(0)), Duration::ZERO);
    }

    #[test]
    fn in_process_answer_keeps_50_ms_and_a_tenth() {
        let within = |c| answer_within(ms(c), Margin::InProcess);
        assert_eq!(within(10_000), ms(8_950));
        assert_eq!(within(1_000), ms(850));
        assert_eq!(within(300), ms(220));
        // No floor: a clock of 100 ms leaves 40, one under 56 ms nothing.
        assert_eq!(within(100), ms(40));
        assert_eq!(within(50), Duration::ZERO);
        assert_eq!(within(0), Duration::ZERO);
    }
}
