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

package org.apache.spark.sql.rocketmq.client

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

/**
 * The wait for a broker's indexing ([[RocketMQIndexing.await]]) over a scripted broker: each look
 * gives the next of its answers, and the order of the looks is recorded.
 */
class RocketMQIndexingSuite extends AnyFunSuite {

  private final class Broker(ends: Seq[Option[Long]], lags: Seq[Option[Long]]) {
    val looks = mutable.Buffer.empty[String]
    private val endAnswers = ends.iterator
    private val lagAnswers = lags.iterator
    def storedEnd(): Option[Long] = { looks += "end"; endAnswers.next() }
    def behind(): Option[Long] = { looks += "behind"; lagAnswers.next() }
    def await(budgetMs: Long = 60000L): Long =
      RocketMQIndexing.await(budgetMs)(() => storedEnd(), () => behind(), () => ())
  }

  test("nothing behind: one request, the log's end is not asked") {
    val broker = new Broker(Nil, Seq(Some(0L)))
    assert(broker.await() === 0L)
    assert(broker.looks === Seq("behind"))
  }

  test("a broker that refuses to tell how far it indexed is not waited for") {
    val broker = new Broker(Nil, Seq(None))
    assert(broker.await() === 0L)
    assert(broker.looks === Seq("behind"))
  }

  test("behind, on a broker that cannot tell where its log ends (4.x): not waited for") {
    val broker = new Broker(Seq(None), Seq(Some(500L)))
    assert(broker.await() === 0L)
    assert(broker.looks === Seq("behind", "end"))
  }

  test("behind: waits until what is indexed reaches the log's end when first asked") {
    // Target 1,000; indexed then at least 1000-400, 1200-300, 1500-500 (= the target).
    val broker = new Broker(Seq(Some(1000L), Some(1200L), Some(1500L)),
      Seq(Some(400L), Some(400L), Some(300L), Some(500L)))
    assert(broker.await() === 0L)
    // The lag that counts is asked after the target: the first, older, answer is not used with it.
    assert(broker.looks === Seq("behind", "end", "behind", "end", "behind", "end", "behind"))
  }

  test("still behind when the budget is spent: the bytes short of the target") {
    val broker = new Broker(Seq(Some(1000L)) ++ Seq.fill(1000)(Some(1000L)),
      Seq.fill(1002)(Some(250L)))
    assert(broker.await(budgetMs = 30L) === 250L)
  }
}
