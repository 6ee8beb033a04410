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
    val ranges = try reader.fetchQueueRanges(options.topicsToRead) finally reader.close()
    val start = RocketMQOffsetResolver.resolve(options.batchStartingOffsets, ranges, RocketMQOptions.StartingOffsets)
    val end = RocketMQOffsetResolver.resolve(options.batchEndingOffsets, ranges, RocketMQOptions.EndingOffsets)
    val settings = RocketMQReadSettings(options, failOnDataLoss = true)
    ranges.keys.toSeq.sorted.flatMap { queue =>
      val (from, until) = (start(queue), end(queue))
      if (from > until) throw RocketMQErrors.startAfterEnd(queue, from, until)
      if (from < until) Some(RocketMQInputPartition(queue, from, until, settings)) else None
    }.toArray
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
      option: String): Map[RocketMQQueue, Long] = limit match {
    case Earliest => ranges.map { case (q, r) => q -> r.min }
    case Latest => ranges.map { case (q, r) => q -> r.max }
    case Specific(offsets) =>
      offsets.keys.find(q => !ranges.contains(q)).foreach { q =>
        throw RocketMQErrors.unknownQueue(option, q, ranges.keys.filter(_.topic == q.topic))
      }
      val missingDefault = if (option == RocketMQOptions.StartingOffsets) Earliest else Latest
      val defaults = resolve(missingDefault, ranges, option)
      ranges.map { case (q, r) =>
        q -> (offsets.get(q) match {
          case Some(EarliestOffset) => r.min
          case Some(LatestOffset) => r.max
          case Some(offset) => offset
          case None => defaults(q)
        })
      }
  }
}
