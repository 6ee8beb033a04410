package org.apache.spark.sql.rocketmq

import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}

/**
 * A bounded read: from `startingOffsets` to `endingOffsets` of every readable queue of the topics,
 * resolved against the brokers once, when Spark plans the partitions. One input partition per queue
 * that has something to read; each reads exactly its range and stops.
 */
private[rocketmq] class RocketMQBatch(options: RocketMQOptions) extends Batch {

  private lazy val partitions: Array[InputPartition] = {
    val reader = new RocketMQOffsetReader(options)
    val (start, end) = try {
      val ranges = reader.fetchQueueRanges(options.topicsToRead)
      (RocketMQOffsetResolver.resolve(options.batchStartingOffsets, ranges, isStart = true, reader),
        RocketMQOffsetResolver.resolve(options.batchEndingOffsets, ranges, isStart = false, reader))
    } finally reader.close()
    val settings = RocketMQReadSettings(options, failOnDataLoss = true)
    val ranges = start.keys.toSeq.sorted.map { queue =>
      val (from, until) = (start(queue), end(queue))
      if (from > until) throw RocketMQErrors.startAfterEnd(queue, from, until)
      RocketMQOffsetRange(queue, from, until)
    }
    RocketMQOffsetRangeCalculator.partitions(ranges, options.minPartitions, settings, Nil).toArray[InputPartition]
  }

  override def planInputPartitions(): Array[InputPartition] = partitions

  override def createReaderFactory(): PartitionReaderFactory = RocketMQPartitionReaderFactory
}

/** Turns a start or end limit into one offset per queue, given the queues' current ranges. */
private[rocketmq] object RocketMQOffsetResolver {
  import RocketMQOffsetRangeLimit._

  def resolve(
      limit: RocketMQOffsetRangeLimit,
      ranges: Map[RocketMQQueue, RocketMQQueueRange],
      isStart: Boolean,
      reader: => RocketMQOffsetReader): Map[RocketMQQueue, Long] = {
    def default: Map[RocketMQQueue, Long] = resolve(if (isStart) Earliest else Latest, ranges, isStart, reader)
    def checkKnown(queues: Iterable[RocketMQQueue], option: String): Unit =
      queues.find(q => !ranges.contains(q)).foreach { q =>
        throw RocketMQErrors.unknownQueue(option, q, ranges.keys.filter(_.topic == q.topic))
      }
    def clamp(q: RocketMQQueue, offset: Long): Long = math.min(math.max(offset, ranges(q).min), ranges(q).max)

    limit match {
      case Earliest => ranges.map { case (q, r) => q -> r.min }
      case Latest => ranges.map { case (q, r) => q -> r.max }
      case Specific(offsets) =>
        checkKnown(offsets.keys, if (isStart) RocketMQOptionKeys.StartingOffsets else RocketMQOptionKeys.EndingOffsets)
        val fallback = default
        ranges.map { case (q, r) =>
          q -> (offsets.get(q) match {
            case Some(EarliestOffset) => r.min
            case Some(LatestOffset) => r.max
            case Some(offset) => offset
            case None => fallback(q)
          })
        }
      case Timestamp(ts) =>
        reader.offsetsForTimestamp(ranges.keys, ts).map { case (q, o) => q -> clamp(q, o) }
      case TimestampPerQueue(times) =>
        checkKnown(times.keys,
          if (isStart) RocketMQOptionKeys.StartingOffsetsByTimestamp else RocketMQOptionKeys.EndingOffsetsByTimestamp)
        val found = times.groupBy(_._2).flatMap { case (ts, qs) => reader.offsetsForTimestamp(qs.keys, ts) }
        val fallback = default
        ranges.map { case (q, _) => q -> found.get(q).map(clamp(q, _)).getOrElse(fallback(q)) }
    }
  }
}
