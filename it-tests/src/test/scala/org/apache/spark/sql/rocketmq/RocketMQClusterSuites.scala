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

package org.apache.spark.sql.rocketmq

import org.scalatest.{BeforeAndAfterAll, Suites}

/**
 * The suites of the shared broker cluster ([[RocketMQClusterProcess.shared]]: five broker JVMs, a
 * name server and a controller), one after the other, and the cluster stopped after the last. Left
 * to discovery, they ran apart, and the cluster's idle JVMs (a broker's background services take a
 * few percent of a core even with nothing to do) stayed up for every suite after the first of them,
 * on a machine whose two cores the suites keep busy. The three are `@DoNotDiscover`, and
 * ScalaTest's `-z` does not reach the tests of nested suites: to run one test alone, drop its
 * suite's annotation locally and run `build/sbt "itTests/testOnly *<that suite> -- -z <a word of
 * the test's name>"`.
 */
class RocketMQClusterSuites
  extends Suites(new RocketMQClusterSuite, new RocketMQClusterStreamSuite,
    new RocketMQClusterExactlyOnceSuite)
  with BeforeAndAfterAll {

  override protected def afterAll(): Unit =
    try RocketMQClusterProcess.closeShared()
    finally super.afterAll()
}
