/*
 * Copyright the rocketmq-spark authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.apache.spark.sql.rocketmq;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The local file system under the scheme {@code decisionhalt://}, for a streaming query's
 * checkpoint: once the exactly-once sink has written the decision of epoch {@code
 * fs.decisionhalt.epoch} (the file {@code rocketmq-sink/decisions/<epoch>}, created without
 * overwrite), the JVM halts with exit code 137, as a SIGKILL would end it.
 * test_exactly_once_kill.py puts the driver there: between the decision and its commits. Written in
 * Java so that it loads in a driver of any Scala version.
 */
public class DecisionHaltFileSystem extends RawLocalFileSystem {
  public static final String SCHEME = "decisionhalt";
  /** The epoch after whose decision the JVM halts; unset, it never halts. */
  public static final String EPOCH_KEY = "fs.decisionhalt.epoch";

  private static final URI ROOT = URI.create(SCHEME + ":///");

  @Override
  public URI getUri() {
    return ROOT;
  }

  @Override
  public String getScheme() {
    return SCHEME;
  }

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(ROOT, conf);
  }

  // RawLocalFileSystem creates through either of these, with or without a permission.
  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite,
      int bufferSize, short replication, long blockSize, Progressable progress) throws IOException {
    return haltingIfDecision(f, overwrite,
        super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress));
  }

  @Override
  public FSDataOutputStream create(Path f, boolean overwrite, int bufferSize, short replication,
      long blockSize, Progressable progress) throws IOException {
    return haltingIfDecision(f, overwrite,
        super.create(f, overwrite, bufferSize, replication, blockSize, progress));
  }

  private FSDataOutputStream haltingIfDecision(Path f, boolean overwrite, FSDataOutputStream out) {
    String epoch = getConf().get(EPOCH_KEY);
    Path parent = f.getParent();
    boolean decision = !overwrite && epoch != null && f.getName().equals(epoch) && parent != null
        && parent.getName().equals("decisions");
    return decision ? new FSDataOutputStream(new HaltOnClose(out), null) : out;
  }

  /** Closes the decision file whole, then halts: nothing after the decision runs. */
  private static final class HaltOnClose extends FilterOutputStream {
    HaltOnClose(OutputStream out) {
      super(out);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
    }

    @Override
    public void close() throws IOException {
      super.close();
      System.err.println("DecisionHaltFileSystem: halting after the decision was written");
      Runtime.getRuntime().halt(137);
    }
  }
}
