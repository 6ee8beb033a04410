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

import java.nio.charset.StandardCharsets

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * Keeps a streaming query's first offsets in its checkpoint (`<source
 * checkpoint>/initial-offsets`), written once. Spark logs offsets only when a batch runs; without
 * this, a query stopped before its first batch would resolve `latest` or a timestamp again on
 * restart and could skip messages.
 */
private[rocketmq] class RocketMQInitialOffsetStore(checkpointLocation: String,
    hadoopConf: Configuration) {
  private val path = new Path(checkpointLocation, "initial-offsets")

  /** The stored initial offset, or `resolve()` stored first. */
  def getOrCreate(resolve: () => RocketMQSourceOffset): RocketMQSourceOffset = {
    val fs = path.getFileSystem(hadoopConf)
    if (fs.exists(path)) {
      val in = fs.open(path)
      try {
        val text = new java.io.ByteArrayOutputStream()
        val buffer = new Array[Byte](8192)
        Iterator.continually(in.read(buffer)).takeWhile(_ >= 0).foreach(text.write(buffer, 0, _))
        RocketMQSourceOffset.parse(new String(text.toByteArray, StandardCharsets.UTF_8))
      } finally in.close()
    } else {
      val offset = resolve()
      fs.mkdirs(path.getParent)
      val tmp = new Path(path.getParent, s".initial-offsets-${java.util.UUID.randomUUID()}.tmp")
      val out = fs.create(tmp, false)
      try out.write(offset.json().getBytes(StandardCharsets.UTF_8))
      finally out.close()
      if (!fs.rename(tmp, path)) {
        fs.delete(tmp, false)
        if (!fs.exists(path)) throw new java.io.IOException(s"could not write $path")
        return getOrCreate(resolve) // another attempt of this query wrote it first
      }
      offset
    }
  }
}
