DROP INDEX series_never_checked;
CREATE INDEX series_never_checked ON series (site, series_id)
    WHERE finished_at IS NULL AND (checked_at IS NULL OR (latest_chapter_num IS NULL AND failure_outcome = ''));
-- Before this migration a Reader's Sighting raised Latest Chapter whatever
-- the page showed: the highest own Sighting raises it again.
UPDATE series s SET latest_chapter_num = o.chapter_num, latest_chapter_url = o.chapter_url, latest_raised_by = o.reader_id
  FROM (SELECT DISTINCT ON (site, series_id) * FROM own_sightings
         ORDER BY site, series_id, chapter_num DESC, reader_id) o
 WHERE s.site = o.site AND s.series_id = o.series_id
   AND (s.latest_chapter_num IS NULL OR s.latest_chapter_num < o.chapter_num);
DROP TABLE own_sightings;
