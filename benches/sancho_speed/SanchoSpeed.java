// Random playouts per second of Sancho's propositional network (the SanchoGGP
// fork of ggp-base, /work/shared/tools/sancho), one thread, for comparison with
// `ggp-asp simulate --engine propnet`. Driven by benches/sancho_speed.sh; a
// measuring instrument, no part of the project, its tests or CI.
//
//   java -cp CLASSES:SANCHO_JARS SanchoSpeed GAME.kif [SECONDS [WARMUP_SECONDS]]
//
// Prints one line: NAME playouts/s N states/s M method=... (states counted as
// ggp-asp counts them: every state a playout visits, its start included).
//
// Method `depthcharge` (the default): the machine Sancho plays with,
// ForwardDeadReckonPropnetStateMachine, built as Sancho builds it
// (new ForwardDeadReckonPropnetStateMachine(instances, metagameTimeout, role,
// new RuntimeGameCharacteristics(null)); initialize(rules)), greedy rollouts
// off as its reference MCTS player sets them (enableGreedyRollouts(false, true)),
// then getDepthChargeResult(initialInternalState, playoutInfo) per playout, the
// call Sancho's rollout workers make (RolloutRequest.process), uniformly random
// joint moves, followed by getGoal(role) for every role as those workers read
// the result. Sancho's depth charge stops early where goals are latched (a
// result that no longer can change); the line reports how many playouts ended
// on a terminal state (`terminal=`).
// Method `generic` (METHOD=generic): the same machine through ggp-base's generic
// StateMachine interface (getRandomJointMove / getNextState / isTerminal /
// getGoal on MachineState objects), much slower, for reference.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

import org.ggp.base.player.gamer.statemachine.sancho.RuntimeGameCharacteristics;
import org.ggp.base.util.game.Game;
import org.ggp.base.util.gdl.grammar.Gdl;
import org.ggp.base.util.propnet.polymorphic.forwardDeadReckon.ForwardDeadReckonInternalMachineState;
import org.ggp.base.util.statemachine.MachineState;
import org.ggp.base.util.statemachine.Move;
import org.ggp.base.util.statemachine.Role;
import org.ggp.base.util.statemachine.implementation.propnet.forwardDeadReckon.ForwardDeadReckonPropnetStateMachine;

public final class SanchoSpeed {
  // longest playout the trace arrays allow; more than any game of the corpus plays
  private static final int MAX_DEPTH = 10000;

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: SanchoSpeed GAME.kif [SECONDS [WARMUP_SECONDS]]");
      System.exit(2);
    }
    Path file = Paths.get(args[0]);
    double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 10.0;
    double warmup = args.length > 2 ? Double.parseDouble(args[2]) : 2.0;
    String method = System.getenv().getOrDefault("METHOD", "depthcharge");
    String name = file.getFileName().toString().replaceFirst("\\.kif$", "");

    // As ggp-base's Game.createEphemeralGame / getRules: the rulesheet through
    // preprocessRulesheet, then SymbolFactory and GdlFactory.
    String text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
    Game game = Game.createEphemeralGame(Game.preprocessRulesheet(text));
    List<Gdl> rules = game.getRules();
    Role[] roles = Role.computeRoles(rules);

    long buildStart = System.nanoTime();
    ForwardDeadReckonPropnetStateMachine sm = new ForwardDeadReckonPropnetStateMachine(
        1, 60_000L, roles[0], new RuntimeGameCharacteristics(null));
    sm.initialize(rules);
    sm.enableGreedyRollouts(false, true);
    double buildS = (System.nanoTime() - buildStart) / 1e9;

    Result r;
    if (method.equals("generic")) {
      runGeneric(sm, warmup);
      r = runGeneric(sm, seconds);
    } else if (method.equals("depthcharge")) {
      runDepthCharge(sm, warmup);
      r = runDepthCharge(sm, seconds);
    } else {
      throw new IllegalArgumentException("METHOD is depthcharge or generic, not " + method);
    }
    System.out.printf("%s playouts/s %.1f states/s %.1f method=%s playouts=%d terminal=%d"
        + " avg_length=%.2f build_s=%.2f%n",
        name, r.playouts / r.seconds, r.states / r.seconds,
        method.equals("generic") ? "generic-StateMachine(getRandomJointMove,getNextState,isTerminal)"
            : "ForwardDeadReckonPropnetStateMachine.getDepthChargeResult",
        r.playouts, r.terminal, (double) (r.states - r.playouts) / r.playouts, buildS);
    // Sancho's classes leave non-daemon threads behind
    System.exit(0);
  }

  private static final class Result {
    long playouts, states, terminal;
    double seconds;
  }

  private static Result runDepthCharge(ForwardDeadReckonPropnetStateMachine sm, double seconds) {
    Role[] roles = sm.getRoles();
    ForwardDeadReckonInternalMachineState start = sm.createInternalState(sm.getInitialState());
    ForwardDeadReckonPropnetStateMachine.PlayoutInfo info = sm.new PlayoutInfo(MAX_DEPTH);
    info.cutoffDepth = MAX_DEPTH;
    info.factor = null;
    info.moveWeights = null;
    info.recordTrace = false;
    Result r = new Result();
    long sink = 0;
    long t0 = System.nanoTime();
    long end = t0 + (long) (seconds * 1e9);
    long now;
    do {
      sm.getDepthChargeResult(start, info);
      if (sm.isTerminal()) {
        r.terminal++;
      }
      for (Role role : roles) {
        sink += sm.getGoal(role);
      }
      r.playouts++;
      r.states += info.playoutLength + 1;
      now = System.nanoTime();
    } while (now < end);
    r.seconds = (now - t0) / 1e9;
    if (sink == Long.MIN_VALUE) {
      System.err.println(sink);
    }
    return r;
  }

  private static Result runGeneric(ForwardDeadReckonPropnetStateMachine sm, double seconds)
      throws Exception {
    Role[] roles = sm.getRoles();
    MachineState start = sm.getInitialState();
    Result r = new Result();
    long sink = 0;
    long t0 = System.nanoTime();
    long end = t0 + (long) (seconds * 1e9);
    long now;
    do {
      MachineState s = start;
      int length = 0;
      while (!sm.isTerminal(s) && length < MAX_DEPTH) {
        List<Move> joint = sm.getRandomJointMove(s);
        s = sm.getNextState(s, joint);
        length++;
      }
      if (sm.isTerminal(s)) {
        r.terminal++;
      }
      for (Role role : roles) {
        sink += sm.getGoal(s, role);
      }
      r.playouts++;
      r.states += length + 1;
      now = System.nanoTime();
    } while (now < end);
    r.seconds = (now - t0) / 1e9;
    if (sink == Long.MIN_VALUE) {
      System.err.println(sink);
    }
    return r;
  }
}
