package io.netec.hdfs.switchroute;

/**
 * Faults of the software switch's own arithmetic, injected by tests as Hadoop's
 * DataNodeFaultInjector injects the DataNode's: a flipped bit in a slot's sum, as a switch's
 * memory or multiplier could flip one. Does nothing unless a test sets one.
 */
public class SwitchFaultInjector {
  private static volatile SwitchFaultInjector instance = new SwitchFaultInjector();

  public static SwitchFaultInjector get() {
    return instance;
  }

  /** Installs {@code injector} (null: none); returns the one it replaced. */
  public static SwitchFaultInjector set(SwitchFaultInjector injector) {
    SwitchFaultInjector before = instance;
    instance = injector == null ? new SwitchFaultInjector() : injector;
    return before;
  }

  /**
   * A stripe's sum for row {@code row} is complete and about to leave as a RESULT; {@code
   * sum[0, length)} may be changed.
   */
  public void beforeResult(int task, int row, long seq, byte[] sum, int length) {
  }
}
